package fieldfile

// YAML 1.1 scalars as PyYAML's safe_load reads them: Ray reads its config
// files (serve deploy, serve run, build_openai_app's files) with
// yaml.safe_load, whose resolver is YAML 1.1's, not YAML 1.2's. The
// regular expressions and the constructors below are PyYAML 6.0.4's
// (resolver.py, constructor.py), checked against the project's Ray
// virtualenv by TestScalarsArePyYAMLs.

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// The implicit resolvers of PyYAML's Resolver, in the order it tries them.
var (
	reBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	reFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?` +
		`|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?` +
		`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*` +
		`|[-+]?\.(?:inf|Inf|INF)` +
		`|\.(?:nan|NaN|NAN))$`)
	reInt = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+` +
		`|[-+]?0[0-7_]+` +
		`|[-+]?(?:0|[1-9][0-9_]*)` +
		`|[-+]?0x[0-9a-fA-F_]+` +
		`|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	reMerge     = regexp.MustCompile(`^(?:<<)$`)
	reNull      = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	reTimestamp = regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]` +
		`|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?` +
		`(?:[Tt]|[ \t]+)[0-9][0-9]?` +
		`:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?` +
		`(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)
	reValue = regexp.MustCompile(`^(?:=)$`)

	// The constructor's timestamp pattern, with its groups.
	reTimestampParts = regexp.MustCompile(`^([0-9][0-9][0-9][0-9])-([0-9][0-9]?)-([0-9][0-9]?)` +
		`(?:(?:[Tt]|[ \t]+)([0-9][0-9]?):([0-9][0-9]):([0-9][0-9])(?:\.([0-9]*))?` +
		`(?:[ \t]*(Z|([-+])([0-9][0-9]?)(?::([0-9][0-9]))?))?)?$`)

	// A decimal number as Python's float() reads one (and JSON writes
	// one), which PyYAML's resolver may leave a string: 1e5, -.5, +1.
	reDecimal = regexp.MustCompile(`^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$`)
)

// tag is what PyYAML resolves a plain scalar to.
type tag uint8

const (
	tagStr tag = iota
	tagBool
	tagInt
	tagFloat
	tagNull
	tagTimestamp
	tagMerge // <<: a merge key, and nothing else
	tagValue // =: a key only (the YAML 1.1 value key), else an error
)

// resolvePlain is PyYAML's Resolver.resolve for an untagged plain scalar.
func resolvePlain(s string) tag {
	if s != "" && !strings.ContainsRune("yYnNtTfFoO-+0123456789.<~=", rune(s[0])) {
		return tagStr // no resolver starts with this character
	}
	if isDecimal(s) {
		return tagInt
	}
	switch {
	case reBool.MatchString(s):
		return tagBool
	case reFloat.MatchString(s):
		return tagFloat
	case reInt.MatchString(s):
		return tagInt
	case reMerge.MatchString(s):
		return tagMerge
	case reNull.MatchString(s):
		return tagNull
	case reTimestamp.MatchString(s):
		return tagTimestamp
	case reValue.MatchString(s):
		return tagValue
	}
	return tagStr
}

// isDecimal reports a plain decimal integer without a leading zero, sign
// or underscore: the common case, which needs no regular expression.
func isDecimal(s string) bool {
	if s == "" || len(s) > 18 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pyBool is SafeConstructor.construct_yaml_bool.
func pyBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "yes", "true", "on":
		return true, nil
	case "no", "false", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a YAML 1.1 boolean (yes, no, true, false, on, off)", s)
}

// pyInt is SafeConstructor.construct_yaml_int for a value the int
// resolver matched: the integer's decimal digits, of any size.
func pyInt(s string) (string, error) {
	if isDecimal(s) {
		return s, nil
	}
	if !reInt.MatchString(s) {
		return "", fmt.Errorf("%q is not a YAML 1.1 integer", s)
	}
	v := strings.ReplaceAll(s, "_", "")
	neg := v[0] == '-'
	if v[0] == '-' || v[0] == '+' {
		v = v[1:]
	}
	n := new(big.Int)
	ok := true
	switch {
	case v == "0":
	case strings.HasPrefix(v, "0b"):
		_, ok = n.SetString(v[2:], 2)
	case strings.HasPrefix(v, "0x"):
		_, ok = n.SetString(v[2:], 16)
	case v[0] == '0':
		_, ok = n.SetString(v, 8)
	case strings.Contains(v, ":"):
		// Sexagesimal: 1:30 is 90.
		base := big.NewInt(1)
		parts := strings.Split(v, ":")
		for i := len(parts) - 1; i >= 0; i-- {
			d, ok := new(big.Int).SetString(parts[i], 10)
			if !ok {
				return "", fmt.Errorf("%q is not a YAML 1.1 integer", s)
			}
			n.Add(n, d.Mul(d, base))
			base.Mul(base, big.NewInt(60))
		}
	default:
		_, ok = n.SetString(v, 10)
	}
	if !ok {
		// 0b_ and 0x_: digits the resolver takes and Python's int() refuses.
		return "", fmt.Errorf("%q has no digits", s)
	}
	if neg {
		n.Neg(n)
	}
	return n.String(), nil
}

// pyFloat is SafeConstructor.construct_yaml_float for a value the float
// resolver matched (or one tagged !!float).
func pyFloat(s string) (float64, error) {
	v := strings.ToLower(strings.ReplaceAll(s, "_", ""))
	if v == "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	sign := 1.0
	if v[0] == '-' {
		sign = -1
	}
	if v[0] == '-' || v[0] == '+' {
		v = v[1:]
	}
	switch {
	case v == ".inf":
		return sign * math.Inf(1), nil
	case v == ".nan":
		return math.NaN(), nil
	case strings.Contains(v, ":"):
		var f float64
		base := 1.0
		parts := strings.Split(v, ":")
		for i := len(parts) - 1; i >= 0; i-- {
			d, err := pythonFloat(parts[i])
			if err != nil {
				return 0, fmt.Errorf("%q is not a number", s)
			}
			f += d * base
			base *= 60
		}
		return sign * f, nil
	}
	f, err := pythonFloat(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return sign * f, nil
}

// pythonFloat is Python's float() of a decimal number (no sign: the
// constructor took it): correctly rounded, and out of range it is
// infinity or zero rather than an error.
func pythonFloat(s string) (float64, error) {
	switch s {
	case "inf", "infinity":
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	}
	if s == "" || strings.Trim(s, "0123456789.e+-") != "" {
		// Go also reads hex floats and underscores; Python's float() not.
		return 0, strconv.ErrSyntax
	}
	f, err := strconv.ParseFloat(s, 64)
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return f, nil
	}
	return f, err
}

// pyRepr is Python's repr of a float: the shortest digits that read back
// as f, in fixed notation from 1e-4 up to 1e16 (with at least one digit
// after the point), in exponent notation outside.
func pyRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // the point's place after the first digit
	if f == 0 {
		return sign + "0.0"
	}
	if decpt <= -4 || decpt > 16 {
		out := digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, out, es, exp)
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	}
	return sign + digits[:decpt] + "." + digits[decpt:]
}

// pyTimestamp is SafeConstructor.construct_yaml_timestamp: the value's
// isoformat() (a date, or a datetime with its offset), or the error
// Python's datetime gives for a day or an hour that does not exist.
func pyTimestamp(s string) (string, error) {
	m := reTimestampParts.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("%q is not a YAML 1.1 timestamp", s)
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	year, month, day := num(m[1]), num(m[2]), num(m[3])
	if year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return "", fmt.Errorf("%q is not a date", s)
	}
	date := fmt.Sprintf("%04d-%02d-%02d", year, month, day)
	if m[4] == "" {
		return date, nil
	}
	hour, minute, second := num(m[4]), num(m[5]), num(m[6])
	if hour > 23 || minute > 59 || second > 59 {
		return "", fmt.Errorf("%q is not a time of day", s)
	}
	out := fmt.Sprintf("%sT%02d:%02d:%02d", date, hour, minute, second)
	if frac := m[7]; frac != "" {
		if len(frac) > 6 {
			frac = frac[:6]
		}
		frac += strings.Repeat("0", 6-len(frac))
		if frac != "000000" {
			out += "." + frac
		}
	}
	switch {
	case m[9] != "":
		mins := num(m[10])*60 + num(m[11])
		if mins >= 24*60 {
			return "", fmt.Errorf("%q has an offset of a day or more", s)
		}
		sign := "+"
		if m[9] == "-" && mins != 0 {
			sign = "-"
		}
		out += fmt.Sprintf("%s%02d:%02d", sign, mins/60, mins%60)
	case m[8] == "Z":
		out += "+00:00"
	}
	return out, nil
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// acceleratorConfigJSON is AcceleratorConfig as JSON and YAML spell it:
// the head reservation timeout in seconds under Ray's name,
// head_reservation_timeout_s, like every other timeout of a Serve config.
type acceleratorConfigJSON struct {
	Kind                    Kind     `json:"kind,omitempty"`
	Accelerator             string   `json:"accelerator_type,omitempty"`
	Topology                string   `json:"topology,omitempty"`
	HeadReservationTimeoutS *float64 `json:"head_reservation_timeout_s,omitempty"`
}

// FileShape is AcceleratorConfig as files spell it (see
// field.FileShaper): its keys and their types, for the strict file loader.
func (AcceleratorConfig) FileShape() any { return acceleratorConfigJSON{} }

// MarshalJSON writes the head reservation timeout as
// head_reservation_timeout_s, in seconds; NoHeadReservationTimeout as -1.
func (a AcceleratorConfig) MarshalJSON() ([]byte, error) {
	out := acceleratorConfigJSON{Kind: a.Kind, Accelerator: a.Accelerator, Topology: a.Topology}
	if a.NoHeadReservationTimeout {
		s := -1.0
		out.HeadReservationTimeoutS = &s
	} else if a.HeadReservationTimeout != 0 {
		s := a.HeadReservationTimeout.Seconds()
		out.HeadReservationTimeoutS = &s
	}
	return json.Marshal(out)
}

// maxTimeoutS is the longest timeout a time.Duration holds, in seconds.
var maxTimeoutS = time.Duration(math.MaxInt64).Seconds()

// UnmarshalJSON reads head_reservation_timeout_s, seconds as a number;
// -1 is NoHeadReservationTimeout, and any other negative number is kept
// for Compile to refuse at the field. An
// unknown key is an error; the old head_reservation_timeout says what it
// became.
func (a *AcceleratorConfig) UnmarshalJSON(b []byte) error {
	if a == nil {
		return errors.New("serve: AcceleratorConfig.UnmarshalJSON into a nil pointer: pass a pointer to a value")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var in acceleratorConfigJSON
	if err := dec.Decode(&in); err != nil {
		var probe map[string]json.RawMessage
		if json.Unmarshal(b, &probe) == nil {
			if _, old := probe["head_reservation_timeout"]; old {
				return errors.New(`serve: accelerator_config: head_reservation_timeout is now head_reservation_timeout_s, in seconds (e.g. 30), Ray's name and unit`)
			}
			if raw, ok := probe["head_reservation_timeout_s"]; ok && len(raw) > 0 && raw[0] == '"' {
				return fmt.Errorf(`serve: accelerator_config: head_reservation_timeout_s is %s: want seconds as a number, e.g. 30 or 2.5`, raw)
			}
		}
		return fmt.Errorf("serve: accelerator_config: %w", err)
	}
	out := AcceleratorConfig{Kind: in.Kind, Accelerator: in.Accelerator, Topology: in.Topology}
	if s := in.HeadReservationTimeoutS; s != nil && *s == -1 {
		out.NoHeadReservationTimeout = true
	} else if s != nil {
		if math.IsNaN(*s) || math.Abs(*s) >= maxTimeoutS {
			return fmt.Errorf("serve: accelerator_config: head_reservation_timeout_s is %v: want seconds up to %.0f", *s, maxTimeoutS)
		}
		out.HeadReservationTimeout = time.Duration(*s * float64(time.Second))
		if out.HeadReservationTimeout == 0 && *s != 0 {
			return fmt.Errorf("serve: accelerator_config: head_reservation_timeout_s is %v: below a nanosecond", *s)
		}
	}
	*a = out
	return nil
}

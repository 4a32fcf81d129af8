package kuberay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/raytpu/raytpu/placement"
)

// planDigest is the first 16 hex digits of the SHA-256 of the plan's
// canonical JSON: object keys sorted at every level, numbers as written,
// no spaces. The plan's raw parts (a job's launcherConfig, a Serve
// config's user_config) keep whatever key order the path that brought the
// plan gave them, a YAML file read back for one; the canonical form makes
// the digest the plan's, not the path's.
func planDigest(p *placement.Plan) (string, error) {
	raw, err := p.MarshalIndent()
	if err != nil {
		return "", fmt.Errorf("kuberay: encoding plan %q: %w", p.Name, err)
	}
	canon, err := canonicalJSON(raw)
	if err != nil {
		return "", fmt.Errorf("kuberay: encoding plan %q: %w", p.Name, err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:8]), nil
}

// canonicalJSON re-encodes a JSON document with every object's keys
// sorted (encoding/json sorts map keys) and its numbers as written.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

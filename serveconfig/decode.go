package serveconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// applicationJSON is Application without its methods: what encoding/json
// decodes, and the keys a file holding an Application may spell.
type applicationJSON Application

// deploymentJSON is Deployment without its methods.
type deploymentJSON Deployment

// FileShape gives a strict file loader the keys and value types of an
// Application in a file (see field.FileShaper).
func (Application) FileShape() any { return applicationJSON{} }

// FileShape gives a strict file loader the keys and value types of a
// Deployment in a file (see field.FileShaper).
func (Deployment) FileShape() any { return deploymentJSON{} }

// UnmarshalJSON reads an application as MarshalJSON writes it. Keys it
// does not know are ignored, as Serve ignores them; numbers inside args
// and user_config decode as json.Number.
func (a *Application) UnmarshalJSON(b []byte) error {
	if a == nil {
		return errNilTarget
	}
	var in applicationJSON
	if err := decodeNumbers(b, &in); err != nil {
		return err
	}
	*a = Application(in)
	return nil
}

// UnmarshalJSON reads a deployment as MarshalJSON writes it, taking its
// slice reservation (and, with one, its profiler) out of user_config.
func (d *Deployment) UnmarshalJSON(b []byte) error {
	if d == nil {
		return errNilTarget
	}
	var in deploymentJSON
	if err := decodeNumbers(b, &in); err != nil {
		return err
	}
	out := Deployment(in)
	if raw, ok := out.UserConfig[SliceReservationKey]; ok {
		out.Reservation = new(SliceReservation)
		if err := reencode(raw, out.Reservation); err != nil {
			return fmt.Errorf("serveconfig: deployment %q: user_config.%s: %w", out.Name, SliceReservationKey, err)
		}
		uc := out.UserConfig // decoded here: no one else holds it
		delete(uc, SliceReservationKey)
		if raw, ok := uc[ProfilerKey]; ok {
			out.Profiler = new(ProfilerConfig)
			if err := reencode(raw, out.Profiler); err != nil {
				return fmt.Errorf("serveconfig: deployment %q: user_config.%s: %w", out.Name, ProfilerKey, err)
			}
			delete(uc, ProfilerKey)
		}
		out.UserConfig = uc
		if len(uc) == 0 {
			out.UserConfig = nil
		}
	}
	*d = out
	return nil
}

// decodeNumbers decodes one JSON value into v, numbers in interfaces as
// json.Number.
func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// reencode decodes a value decoded into an interface once more, into v.
func reencode(x any, v any) error {
	b, err := marshal(x)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

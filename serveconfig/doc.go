// Package serveconfig is Ray Serve's application config (one entry of
// "applications" of PUT /api/serve/applications/, Ray 2.60's
// ServeApplicationSchema and DeploymentSchema) as one typed Go value that
// every part of raytpu shares: package serve compiles an [Application] into
// a plan, the plan carries it (placement.ServeApplication), and backends and
// the ray dashboard client read its fields and send its JSON, never
// decoding JSON to learn what the plan holds.
//
// An Application marshals to exactly the bytes Ray is sent: fields in Ray's
// order, unset ones left out, map keys sorted, no HTML escaping. The
// encoder is written by hand for speed and gives the same bytes as
// encoding/json would for the same fields. A deployment's [SliceReservation]
// and [ProfilerConfig] travel inside its user_config, under the reserved
// keys [SliceReservationKey] and [ProfilerKey]; unmarshalling takes them
// out again, so a config marshals, unmarshals and marshals to the same
// bytes. Numbers inside user_config and args decode as json.Number, which
// keeps them exact.
//
// serveconfig imports only runtimeenv, so that placement, the front ends,
// the backends and the ray transport may all import it.
package serveconfig

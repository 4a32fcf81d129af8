package raycluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// What the head's dashboard serves, and when (Ray 2.60's
// ray/dashboard/head.py, http_server_head.py and subprocesses/):
//
//   - The Jobs API (POST and GET /api/jobs/, /api/version, /api/packages/)
//     is the JobHead module, which runs in a subprocess of the dashboard
//     with its own aiohttp server on a unix socket (dash_JobHead under the
//     session's socket dir). The dashboard's own aiohttp server proxies
//     every JobHead route to it (SubprocessRouteTable).
//   - DashboardHead.run starts every subprocess module, waits for each to
//     report ready (its unix-socket server is up), starts the dashboard's
//     Prometheus metrics server (port DASHBOARD_METRIC_PORT, 44227 unless
//     set), and only then binds the HTTP port, with every route of every
//     module registered at once. So a dashboard that answers at all
//     routes POST /api/jobs/ to JobHead; it never answers 405 there. A
//     JobHead that fails its 1 s health check is restarted; meanwhile its
//     routes answer 500, not 405.
//   - The body "# HTTP 405 Method Not Allowed: POST; use OPTIONS or GET"
//     is prometheus_client's exposition app, which Ray runs for the
//     dashboard's metrics (44227), the autoscaler monitor's (44217) and
//     every node's --metrics-export-port. It answers 200 with metrics text
//     to a GET of any path, /api/version included, and 405 to anything
//     else: a client that gets it is talking to a metrics exporter on the
//     address it was given, not to the dashboard (a stale address, or a
//     dashboard port that a metrics exporter holds).
//
// So a probe by status code alone is fooled; what proves the Jobs API
// takes submissions is a POST /api/jobs/ that JobHead itself answers:
// an empty JSON object is refused with HTTP 400 and a traceback naming
// the missing entrypoint (parse_and_validate_request), and creates no job.

// jobsProbeBody is the submission the probe sends: no entrypoint.
const jobsProbeBody = "{}"

// versionOK checks that GET /api/version answers Ray's version document
// (JobHead's), not just 200.
func (c *Cluster) versionOK(ctx context.Context, hc *http.Client) error {
	resp, err := c.get(ctx, hc, "/api/version")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /api/version: HTTP %d", resp.StatusCode)
	}
	var v struct {
		Version    string `json:"version"`
		RayVersion string `json:"ray_version"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.RayVersion == "" {
		return fmt.Errorf("GET /api/version: not Ray's version document (a metrics exporter on the dashboard's port?): %.80q", body)
	}
	return nil
}

// jobsProbe sends the probe submission once and reports nil when JobHead
// refused it as Ray 2.60 does (HTTP 400 naming the entrypoint).
func (c *Cluster) jobsProbe(ctx context.Context, hc *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.DashboardURL+"/api/jobs/", strings.NewReader(jobsProbeBody))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusBadRequest && bytes.Contains(body, []byte("entrypoint")) {
		return nil
	}
	first, _, _ := bytes.Cut(bytes.TrimSpace(body), []byte("\n"))
	return fmt.Errorf("POST /api/jobs/ with no entrypoint: HTTP %d, want 400 from the Jobs API: %.120q", resp.StatusCode, first)
}

// waitJobsAPI waits until the Jobs API takes submissions (jobsProbe), or
// ctx ends.
func (c *Cluster) waitJobsAPI(ctx context.Context) error {
	hc := &http.Client{Timeout: 10 * time.Second}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	last := errors.New("no answer yet")
	for {
		if err := c.jobsProbe(ctx, hc); err == nil {
			return nil
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %v", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

package ray_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/runtimeenv"
)

func ExampleNewClient() {
	c, err := ray.NewClient("http://127.0.0.1:8265",
		ray.WithHeader("Authorization", "Bearer my-token"),
		ray.WithRetry(ray.RetryPolicy{MaxAttempts: 5, InitialBackoff: 100 * time.Millisecond}),
		ray.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))),
	)
	fmt.Println(c.BaseURL(), err)

	// Options validate their input.
	_, err = ray.NewClient("http://127.0.0.1:8265", ray.WithHeader("Bad Name", "x"))
	fmt.Println(err)
	_, err = ray.NewClient("ftp://127.0.0.1")
	fmt.Println(err)
	// Output:
	// http://127.0.0.1:8265 <nil>
	// ray: WithHeader: invalid header name "Bad Name"
	// ray: NewClient: base URL "ftp://127.0.0.1": scheme must be http or https
}

func ExampleAPIError() {
	// What the Ray 2.60 dashboard answers to a second job with the same
	// submission_id.
	err := error(&ray.APIError{
		Status: 500, Method: "POST", Path: "/api/jobs/",
		Message: "ValueError: Job with submission_id job-1 already exists. Please use a different submission_id.",
		Body:    "Traceback (most recent call last): ... ValueError: Job with submission_id job-1 already exists. ...",
	})
	fmt.Println(errors.Is(err, ray.ErrAlreadyExists), errors.Is(err, ray.ErrNotFound))

	err = fmt.Errorf("wait for job: %w", &ray.APIError{Status: 404, Method: "GET", Path: "/api/jobs/job-2", Message: "Job job-2 does not exist"})
	var ae *ray.APIError
	fmt.Println(errors.Is(err, ray.ErrNotFound), errors.As(err, &ae), ae.Status)
	fmt.Println(err)
	// Output:
	// true false
	// true true 404
	// wait for job: ray: GET /api/jobs/job-2: HTTP 404: Job job-2 does not exist
}

func ExampleRedact() {
	c, _ := ray.NewClient("https://alice:secret@ray.example.com/dash?token=abc")
	fmt.Println(c.BaseURL())
	// Output: https://ray.example.com/dash
}

func ExampleClient_SubmitJob() {
	ctx := context.Background()
	c, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		panic(err)
	}
	// Upload the local working_dir (skipped when the cluster has it).
	env, err := c.PrepareRuntimeEnv(ctx, &runtimeenv.RuntimeEnv{
		WorkingDir: "./trainer",
		EnvVars:    map[string]string{"JAX_PLATFORMS": "cpu"},
	}, ray.PackageOptions{Excludes: []string{"*.ckpt"}})
	if err != nil {
		panic(err)
	}
	id, err := c.SubmitJob(ctx, ray.JobSubmission{
		Entrypoint:              "python train.py",
		RuntimeEnv:              env,
		EntrypointResources:     map[string]float64{"TPU-v6e-16-head": 1},
		EntrypointLabelSelector: map[string]string{"ray.io/tpu-worker-id": "0"},
	})
	if err != nil {
		panic(err)
	}
	for chunk, err := range c.TailJobLogs(ctx, id) {
		if err != nil {
			break
		}
		fmt.Print(chunk)
	}
	job, err := c.WaitJob(ctx, id, ray.WaitOptions{
		OnTransition: func(j ray.JobInfo) { fmt.Println(j.SubmissionID, j.Status) },
	})
	fmt.Println(job.Status, err)
}

// Validate reports package options that packaging would refuse; a
// backend's option checks them when it is configured, before any upload.
func ExamplePackageOptions_Validate() {
	fmt.Println(ray.PackageOptions{}.Validate())
	fmt.Println(ray.PackageOptions{MaxSize: ray.GCSStorageMaxSize}.Validate())
	// Output:
	// <nil>
	// ray: PackageOptions.MaxSize 536870912 must be in (0, 536870912), or 0 for the default 104857599
}

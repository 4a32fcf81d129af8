package kuberay_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// totalityCases call every exported function and method of package kuberay
// with nil, typed-nil, zero and negative inputs: each returns an error (or
// its documented zero answer) and none panics. The key is the entry
// point's name as go doc prints it (Func, or Type.Method).
func totalityCases() map[string]func(t *testing.T) {
	var nilB *kuberay.Backend
	//lint:ignore SA1012 a nil context is what is tested
	var nilCtx context.Context
	ctx := context.Background()
	b, err := kuberay.NewWithClient(fakeRayClient())
	wantErr := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
		}
	}
	return map[string]func(t *testing.T){
		"New": func(t *testing.T) {
			_, err := kuberay.New(nil)
			wantErr(t, "New(nil)", err)
			_, err = kuberay.New(noCluster, nil)
			wantErr(t, "New(cfg, nil)", err)
		},
		"NewWithClient": func(t *testing.T) {
			_, err := kuberay.NewWithClient(nil)
			wantErr(t, "NewWithClient(nil)", err)
		},
		"WithOptions": func(t *testing.T) {
			_, err := kuberay.New(noCluster, kuberay.WithOptions(kuberay.Options{ActiveDeadline: -1, Autoscaling: &kuberay.Autoscaling{MinSlices: -1}}))
			wantErr(t, "WithOptions(negative)", err)
		},
		"WithLogger": func(t *testing.T) {
			_, err := kuberay.New(noCluster, kuberay.WithLogger(nil))
			wantErr(t, "WithLogger(nil)", err)
		},
		"WithKubeClient": func(t *testing.T) {
			_, err := kuberay.New(noCluster, kuberay.WithKubeClient(nil))
			wantErr(t, "WithKubeClient(nil)", err)
		},
		"WithClusterCheck": func(t *testing.T) {
			_, err := kuberay.New(noCluster, kuberay.WithClusterCheck(nil))
			wantErr(t, "WithClusterCheck(nil)", err)
		},
		"WithDryRun": func(t *testing.T) {
			if _, err := kuberay.New(noCluster, kuberay.WithDryRun()); err != nil {
				t.Error(err)
			}
		},
		"CheckOptions": func(t *testing.T) {
			if err := kuberay.CheckOptions(kuberay.Options{}); err != nil {
				t.Errorf("zero Options: %v", err)
			}
			wantErr(t, "CheckOptions(negative)", kuberay.CheckOptions(kuberay.Options{ActiveDeadline: -time.Second, Autoscaling: &kuberay.Autoscaling{MaxSlices: -1, HeadCPU: -1}}))
		},
		"CheckName": func(t *testing.T) {
			wantErr(t, `CheckName("", -5)`, kuberay.CheckName("", -5))
			wantErr(t, `CheckName("", 0)`, kuberay.CheckName("", 0))
			wantErr(t, `CheckName("", 47)`, kuberay.CheckName("", kuberay.MaxRayJobName))
			if err := kuberay.CheckName("-5", -5); err == nil || strings.Contains(err.Error(), "at most -5") {
				t.Errorf("CheckName(_, -5) = %v, want an error about max", err)
			}
		},
		"SuggestName": func(t *testing.T) {
			_, err := kuberay.SuggestName("abc", -1)
			wantErr(t, `SuggestName("abc", -1)`, err)
			_, err = kuberay.SuggestName("abc", 0)
			wantErr(t, `SuggestName("abc", 0)`, err)
			if s, err := kuberay.SuggestName("", 3); err != nil || s != "ray" {
				t.Errorf(`SuggestName("", 3) = %q, %v; want "ray"`, s, err)
			}
		},
		"NameFor": func(t *testing.T) {
			if got := kuberay.NameFor(""); got != "raytpu" {
				t.Errorf(`NameFor("") = %q`, got)
			}
		},
		"LoadConfig": func(t *testing.T) {
			_, _, err := kuberay.LoadConfig("/nonexistent/kubeconfig", "")
			wantErr(t, "LoadConfig(missing file)", err)
		},
		"PackWorkingDir": func(t *testing.T) {
			_, err := kuberay.PackWorkingDir("", nil)
			wantErr(t, `PackWorkingDir("")`, err)
		},
		"Render": func(t *testing.T) {
			_, err := kuberay.Render(nil, kuberay.Options{}, kuberay.RenderInput{})
			wantErr(t, "Render(nil)", err)
			_, err = kuberay.Render(&placement.Plan{}, kuberay.Options{}, kuberay.RenderInput{})
			wantErr(t, "Render(zero plan)", err)
			_, err = kuberay.Render(compile(t, trainer("v6e", "4x4", 1)), kuberay.Options{ActiveDeadline: -1}, kuberay.RenderInput{})
			wantErr(t, "Render(negative deadline)", err)
			_, err = kuberay.Render(compile(t, trainer("v6e", "4x4", 1)), kuberay.Options{}, kuberay.RenderInput{Name: "a\x00b"})
			wantErr(t, "Render(name with NUL)", err)
		},
		"DecodeManifests": func(t *testing.T) {
			for _, in := range []string{"", "\x00", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"} {
				_, err := kuberay.DecodeManifests([]byte(in))
				wantErr(t, "DecodeManifests("+in+")", err)
			}
		},
		"SlicesOf": func(t *testing.T) {
			_, err := kuberay.SlicesOf(nil)
			wantErr(t, "SlicesOf(nil)", err)
			if cs, err := kuberay.SlicesOf(&rayv1.RayCluster{}); err != nil || len(cs.Groups) != 0 {
				t.Errorf("SlicesOf(zero) = %v, %v", cs, err)
			}
		},
		"RefOf": func(t *testing.T) {
			for _, obj := range []runtime.Object{nil, (*rayv1.RayJob)(nil), (*rayv1.RayService)(nil), (*rayv1.RayCluster)(nil)} {
				if got := kuberay.RefOf(obj); got != (kuberay.Ref{}) {
					t.Errorf("RefOf(%T) = %v", obj, got)
				}
			}
		},
		"Ref.String": func(t *testing.T) { _ = kuberay.Ref{}.String() },
		"Manifests.YAML": func(t *testing.T) {
			_, err := (*kuberay.Manifests)(nil).YAML()
			wantErr(t, "nil Manifests.YAML", err)
			_, err = (&kuberay.Manifests{}).YAML()
			wantErr(t, "zero Manifests.YAML", err)
		},
		"Manifests.JSON": func(t *testing.T) {
			_, err := (*kuberay.Manifests)(nil).JSON()
			wantErr(t, "nil Manifests.JSON", err)
			_, err = (&kuberay.Manifests{ConfigMaps: nil, Job: &rayv1ac.RayJobApplyConfiguration{}, Cluster: &rayv1ac.RayClusterApplyConfiguration{}}).JSON()
			wantErr(t, "two objects Manifests.JSON", err)
		},
		"Manifests.Upload": func(t *testing.T) {
			_, err := (*kuberay.Manifests)(nil).Upload(t.Context())
			wantErr(t, "nil Manifests.Upload", err)
			_, err = (&kuberay.Manifests{}).Upload(nil) //nolint:staticcheck // a nil context is what this checks
			wantErr(t, "nil context Manifests.Upload", err)
			// A zero Manifests names no package: nothing to upload.
			if wrote, err := (&kuberay.Manifests{}).Upload(t.Context()); err != nil || len(wrote) != 0 {
				t.Errorf("zero Manifests.Upload = %v, %v; want nothing written", wrote, err)
			}
		},
		"WorkingDir.Key": func(t *testing.T) {
			if (*kuberay.WorkingDir)(nil).Key() != "" || (&kuberay.WorkingDir{}).Key() != "" {
				t.Error("Key of a nil or zero WorkingDir")
			}
		},
		"WorkingDir.URI": func(t *testing.T) {
			if (*kuberay.WorkingDir)(nil).URI() != "" || (&kuberay.WorkingDir{}).URI() != "" {
				t.Error("URI of a nil or zero WorkingDir")
			}
		},
		"ConflictError.Error":  func(t *testing.T) { _ = (*kuberay.ConflictError)(nil).Error() },
		"ConflictError.Is":     func(t *testing.T) { _ = errors.Is((*kuberay.ConflictError)(nil), kuberay.ErrConflict) },
		"ConflictError.Unwrap": func(t *testing.T) { _ = (*kuberay.ConflictError)(nil).Unwrap() },
		"Backend.Run": func(t *testing.T) {
			_, err := nilB.Run(ctx, nil, backend.RunOptions{})
			wantErr(t, "nil Backend", err)
			_, err = b.Run(nilCtx, nil, backend.RunOptions{})
			wantErr(t, "nil context", err)
			_, err = b.Run(ctx, nil, backend.RunOptions{})
			wantErr(t, "nil plan", err)
		},
		"Backend.Apply": func(t *testing.T) {
			_, err := nilB.Apply(ctx, nil, "")
			wantErr(t, "nil Backend", err)
			_, err = b.Apply(ctx, nil, "")
			wantErr(t, "nil plan", err)
		},
		"Backend.ApplyPlan": func(t *testing.T) {
			_, err := nilB.ApplyPlan(ctx, nil)
			wantErr(t, "nil Backend", err)
			_, err = b.ApplyPlan(ctx, nil)
			wantErr(t, "nil plan", err)
		},
		"Backend.ApplyManifest": func(t *testing.T) {
			_, err := nilB.ApplyManifest(ctx, "", nil)
			wantErr(t, "nil Backend", err)
			_, err = b.ApplyManifest(ctx, "", nil)
			wantErr(t, "nil manifest", err)
		},
		"Backend.ApplyManifests": func(t *testing.T) {
			_, err := nilB.ApplyManifests(ctx, "", nil)
			wantErr(t, "nil Backend", err)
			_, err = b.ApplyManifests(ctx, "", nil)
			wantErr(t, "nil Manifests", err)
			_, err = b.ApplyManifests(ctx, "", &kuberay.Manifests{Job: (*rayv1ac.RayJobApplyConfiguration)(nil)})
			wantErr(t, "typed-nil RayJob", err)
		},
		"Backend.Deploy": func(t *testing.T) {
			_, err := nilB.Deploy(ctx, nil)
			wantErr(t, "nil Backend", err)
			_, err = b.Deploy(ctx, nil)
			wantErr(t, "nil plan", err)
		},
		"Backend.Up": func(t *testing.T) {
			_, err := nilB.Up(ctx, nil)
			wantErr(t, "nil Backend", err)
			_, err = b.Up(ctx, nil)
			wantErr(t, "nil plan", err)
		},
		"Backend.Down": func(t *testing.T) {
			wantErr(t, "nil Backend", nilB.Down(ctx, ""))
			wantErr(t, "nil context", b.Down(nilCtx, ""))
		},
		"Backend.Delete": func(t *testing.T) {
			wantErr(t, "nil Backend", nilB.Delete(ctx, ""))
			wantErr(t, "nil context", b.Delete(nilCtx, ""))
		},
		"Backend.Status": func(t *testing.T) {
			_, err := nilB.Status(ctx, "")
			wantErr(t, "nil Backend", err)
			_, err = b.Status(nilCtx, "")
			wantErr(t, "nil context", err)
		},
		"Backend.Wait": func(t *testing.T) {
			_, err := nilB.Wait(ctx, "", backend.WaitOptions{})
			wantErr(t, "nil Backend", err)
			_, err = b.Wait(nilCtx, "", backend.WaitOptions{})
			wantErr(t, "nil context", err)
		},
		"Backend.WaitCluster": func(t *testing.T) {
			_, err := nilB.WaitCluster(ctx, "", nil)
			wantErr(t, "nil Backend", err)
			_, err = b.WaitCluster(nilCtx, "", nil)
			wantErr(t, "nil context", err)
		},
		"Backend.WaitJob": func(t *testing.T) {
			_, err := nilB.WaitJob(ctx, "", backend.RunOptions{})
			wantErr(t, "nil Backend", err)
			_, err = b.WaitJob(ctx, "", backend.RunOptions{})
			wantErr(t, "empty name", err)
		},
		"Backend.ReadClusterSlices": func(t *testing.T) {
			_, err := nilB.ReadClusterSlices(ctx, "")
			wantErr(t, "nil Backend", err)
			_, err = b.ReadClusterSlices(ctx, "")
			wantErr(t, "empty name", err)
		},
		"": func(t *testing.T) {
			if err != nil {
				t.Fatal(err)
			}
		},
	}
}

// Every exported function and method is in totalityCases, and none
// panics on what they pass it.
func TestExportedEntryPointsAreTotal(t *testing.T) {
	t.Parallel()
	cases := totalityCases()
	for _, name := range exportedFuncs(t) {
		if _, ok := cases[name]; !ok {
			t.Errorf("%s is exported and not in totalityCases: add its nil, zero and negative calls", name)
		}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			c(t)
		})
	}
}

// exportedFuncs are the exported functions and the exported methods of
// exported types of package kuberay, as Func or Type.Method.
func exportedFuncs(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range pkgs["kuberay"].Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv == nil {
				out = append(out, fd.Name.Name)
				continue
			}
			typ := fd.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
				out = append(out, id.Name+"."+fd.Name.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// CheckOptions and Render give one answer: for every combination below,
// CheckOptions(o) is nil exactly when Render, of a plan the options fit,
// reports no error under "options"; and when both refuse, they name the
// same fields.
func TestCheckOptionsAgreesWithRender(t *testing.T) {
	t.Parallel()
	one := compile(t, trainer("v4", "2x2x2", 1))
	auto := func(a kuberay.Autoscaling) *kuberay.Autoscaling { return &a }
	namespaces := []string{"", "ml", "Bad_NS!"}
	images := []string{"", "us-docker.pkg.dev/acme/ray:tpu", "rayproject/ray:2.60.0\nx", "../../x"}
	versions := [][2]string{{"", ""}, {"2.61.0rc1", "3.12"}, {"../../x", "9.99"}}
	deadlines := []time.Duration{0, time.Hour, -time.Second}
	autos := []*kuberay.Autoscaling{nil, auto(kuberay.Autoscaling{MaxSlices: 2}), auto(kuberay.Autoscaling{MinSlices: -1}),
		auto(kuberay.Autoscaling{IdleTimeout: -5 * time.Second, Version: "v3"}), auto(kuberay.Autoscaling{Groups: map[string]kuberay.SliceRange{"v4-16": {Min: 2, Max: 1}}})}
	clusters := []string{"", "tpu-pool", "TPU_pool"}
	n := 0
	for _, ns := range namespaces {
		for _, img := range images {
			for _, v := range versions {
				for _, d := range deadlines {
					for _, a := range autos {
						for _, c := range clusters {
							o := kuberay.Options{Namespace: ns, Image: img, RayVersion: v[0], PythonVersion: v[1], ActiveDeadline: d, Autoscaling: a, Cluster: c}
							checked := optionFields(kuberay.CheckOptions(o))
							_, err := kuberay.Render(one, o, kuberay.RenderInput{})
							rendered := optionFields(err)
							if !slices.Equal(checked, rendered) {
								t.Errorf("%+v: CheckOptions names %v, Render %v (%v)", o, checked, rendered, err)
							}
							if len(checked) == 0 && err != nil {
								t.Errorf("%+v: CheckOptions accepts, Render refuses: %v", o, err)
							}
							n++
						}
					}
				}
			}
		}
	}
	if n < 500 {
		t.Errorf("%d combinations", n)
	}
}

// optionFields are the fields of err under "options", sorted.
func optionFields(err error) []string {
	var out []string
	for _, e := range field.Errors(err) {
		if strings.HasPrefix(e.Field, "options.") || e.Field == "options" {
			out = append(out, e.Field+" "+string(e.Type))
		}
	}
	slices.Sort(out)
	return out
}

// fakeRayClient is a KubeRay clientset that holds nothing.
func fakeRayClient() *rayfake.Clientset { return rayfake.NewSimpleClientset() }

// Every method of a nil *Backend and of one not made by New or
// NewWithClient returns an error matching backend.ErrNilBackend.
func TestNilAndZeroBackend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, b := range map[string]*kuberay.Backend{"nil": nil, "zero": new(kuberay.Backend)} {
		errs := map[string]error{}
		_, errs["Run"] = b.Run(ctx, nil, backend.RunOptions{})
		_, errs["Apply"] = b.Apply(ctx, nil, "x")
		_, errs["ApplyPlan"] = b.ApplyPlan(ctx, nil)
		_, errs["ApplyManifest"] = b.ApplyManifest(ctx, "default", nil)
		_, errs["ApplyManifests"] = b.ApplyManifests(ctx, "default", nil)
		_, errs["Deploy"] = b.Deploy(ctx, nil)
		_, errs["Up"] = b.Up(ctx, nil)
		errs["Down"] = b.Down(ctx, "x")
		errs["Delete"] = b.Delete(ctx, "x")
		_, errs["Status"] = b.Status(ctx, "x")
		_, errs["Wait"] = b.Wait(ctx, "x", backend.WaitOptions{})
		_, errs["WaitCluster"] = b.WaitCluster(ctx, "x", nil)
		_, errs["WaitJob"] = b.WaitJob(ctx, "x", backend.RunOptions{})
		_, errs["ReadClusterSlices"] = b.ReadClusterSlices(ctx, "x")
		for m, err := range errs {
			if !errors.Is(err, backend.ErrNilBackend) {
				t.Errorf("%s Backend: %s = %v, want an error matching backend.ErrNilBackend", name, m, err)
			}
		}
	}
}

package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/raytpu/raytpu/kuberay"
)

func newApplyCmd() *cobra.Command {
	var f kubeFlags
	var kubeconfig, kubeContext string
	var dryRun, wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Run a workload on Kubernetes as a KubeRay object (server-side apply)",
		Long: `Render a workload as 'raytpu render' does and server-side apply it with the
field manager "raytpu": a RayService for a Serve application, a RayJob for a
job plan (a local working_dir travels in a ConfigMap the RayJob owns, at most
1 MiB zipped), a RayCluster for a slice plan. Applying the same workload
again changes nothing; --wait follows it until KubeRay is done with it
(states, Serve replicas or worker pods ready as progress). An object of
the same name that raytpu did not create is left alone, and fields another field manager took over are never forced:
the error names each field and its owner. --dry-run asks the apiserver to
validate and store nothing. --autoscale and its bounds render Ray's
autoscaler as 'raytpu render' does. With --ray-cluster, the existing
RayCluster's TPU worker groups are read first and the plan is checked
against them as 'raytpu plan' predicts Ray's autoscaler: a job the
cluster cannot give its slices (no group of that shape, a group whose
maxReplicas is too small, autoscaler v2 and a multi-host slice) is
refused before anything is created.

The cluster comes from the kubeconfig as kubectl finds it: --kubeconfig,
else $KUBECONFIG, else ~/.kube/config; --context picks a context, and the
namespace is --namespace, else the context's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if err := checkTimeout("timeout", timeout); err != nil {
				return err
			}
			// --timeout bounds every request to the cluster, the wait included.
			ctx, cancel := withTimeout(cmd.Context(), timeout)
			defer cancel()
			defer func() {
				if err != nil && ctx.Err() != nil && cmd.Context().Err() == nil {
					err = fmt.Errorf("gave up after --timeout %v: %w", timeout, err)
				}
			}()
			auto, err := f.auto.autoscaling(cmd)
			if err != nil {
				return err
			}
			// Every input is checked before the cluster is contacted:
			// the flags, the workload, and the objects it renders as.
			o, err := f.options(auto, f.namespace)
			if err != nil {
				return err
			}
			p, err := readWorkload(f)
			if err != nil {
				return err
			}
			if _, err := kuberay.Render(p, o, kuberay.RenderInput{}); err != nil {
				return optionFlagErrors(err)
			}
			cfg, ns, err := kuberay.LoadConfig(kubeconfig, kubeContext)
			if err != nil {
				return err
			}
			if f.namespace != "" {
				ns = f.namespace
			}
			o.Namespace = ns
			opts := []kuberay.Option{kuberay.WithOptions(o)}
			if dryRun {
				opts = append(opts, kuberay.WithDryRun())
			}
			b, err := kuberay.New(cfg, opts...)
			if err != nil {
				return err
			}
			if f.cluster != "" {
				cs, err := b.ReadClusterSlices(ctx, f.cluster)
				if err != nil {
					return err
				}
				if err := checkExistingCluster(cmd.OutOrStdout(), cs, p); err != nil {
					return err
				}
			}
			obj, err := b.ApplyPlan(ctx, p)
			if err != nil {
				return err
			}
			ref := kuberay.RefOf(obj)
			if dryRun {
				fmt.Fprintf(cmd.OutOrStdout(), "%s applied (server dry run: nothing stored)\n", ref)
				return nil
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s applied (uid %s, generation %d)\n", ref, ref.UID, ref.Generation)
			if !wait {
				printKubeLinks(w, ref)
				return nil
			}
			return waitKube(ctx, w, b, ref, p.Name)
		},
	}
	addKubeFlags(cmd, &f)
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "path to the kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
	cmd.Flags().StringVar(&kubeContext, "context", "", "kubeconfig context (default: the current context)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "server-side dry run: the apiserver validates the object and stores nothing")
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the object until KubeRay reports the job finished, the service RUNNING or the cluster ready, with its states and ready counts as progress; exit 1 if it fails or --timeout passes")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long the whole command may take: applying, and with --wait following the object (0: no limit)")
	return cmd
}

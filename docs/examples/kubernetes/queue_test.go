package kubernetes_test

import (
	"fmt"
	"log"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/kuberay"
)

// A trainer's RayJob queued in a team's Kueue LocalQueue: labeled for
// Kueue and created suspended, so that KubeRay starts no pod before
// Kueue admits it.
func Example_queue() {
	plan, err := newTrainer().Compile()
	if err != nil {
		log.Fatal(err)
	}
	// [snippet:queue]
	m, err := kuberay.Render(plan, kuberay.Options{Namespace: "ml", Queue: "team-a"}, kuberay.RenderInput{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("queue:", m.Job.Labels["kueue.x-k8s.io/queue-name"])
	fmt.Println("suspend:", *m.Job.Spec.Suspend)

	// What Kueue would refuse is refused here, at its option.
	_, err = kuberay.Render(plan, kuberay.Options{Queue: "team-a", Autoscaling: &kuberay.Autoscaling{}}, kuberay.RenderInput{})
	fmt.Println(field.Refs(err))
	// [end:queue]

	// Output:
	// queue: team-a
	// suspend: true
	// [{options.autoscaling Forbidden}]
}

package serve

import "sync"

// scratch is what one Compile builds only to encode and then drops: the
// Serve config in Ray's shape and the encoder's buffer. Compiles reuse
// them through scratchPool, so that a compile allocates what its plan
// keeps and little else.
type scratch struct {
	app         rayApplication
	deployments []rayDeployment
	route, buf  []byte
}

// The largest buffers a scratch keeps when it goes back to the pool.
const (
	maxScratchBytes       = 64 << 10
	maxScratchDeployments = 64
)

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// release clears every reference sc holds into a user's spec and returns
// it to the pool, without buffers grown past the limits.
func (sc *scratch) release() {
	sc.app = rayApplication{}
	clear(sc.deployments[:cap(sc.deployments)])
	sc.deployments = sc.deployments[:0]
	if cap(sc.deployments) > maxScratchDeployments {
		sc.deployments = nil
	}
	if cap(sc.buf) > maxScratchBytes {
		sc.buf = nil
	}
	if cap(sc.route) > maxScratchBytes {
		sc.route = nil
	}
	scratchPool.Put(sc)
}

// deploymentsFor returns an empty slice with room for n deployments that
// never grows while a Compile fills it (rayConfig's RayActorOptions point
// into its elements).
func (sc *scratch) deploymentsFor(n int) []rayDeployment {
	if cap(sc.deployments) < n {
		sc.deployments = make([]rayDeployment, 0, n)
	}
	return sc.deployments[:0]
}

package serve

// ForgetShapes empties the process's kept slice shapes, so that the next
// compile of every accelerator config resolves its shape again.
func ForgetShapes() {
	shapes.m.Clear()
	shapes.n.Store(0)
}

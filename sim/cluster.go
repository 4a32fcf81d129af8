package sim

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayvocab"
)

// unit is Ray's resource resolution (FixedPoint): amounts are held as
// integers of 1/10000.
const unit = 10000

// maxAmount bounds a resource amount so that it stays exact in fixed point.
const maxAmount = 1e14

func toFixed(v float64) int64   { return int64(math.Round(v * unit)) }
func fromFixed(v int64) float64 { return float64(v) / unit }

type resID int32

// Cluster is a simulated Ray cluster of TPU slices and CPU-only nodes with
// a placement group scheduler that follows Ray's (PACK, SPREAD,
// STRICT_PACK, STRICT_SPREAD, bundle label selectors) and breaks every tie
// by host order, so that its choices are reproducible.
//
// Placing a group never scans the whole fleet. Hosts with the same labels
// (but the slice name) and the same total resources form a class; inside a
// class, hosts with the same free resources share a state, a bitset of
// members in host order. A bundle is matched against the classes an index
// offers for its resources and label values (the head resource of a pod
// type names exactly one class), each state is scored once, and its first
// member is the candidate. A bundle pinned to a slice (label
// ray.io/tpu-slice-name or the slice's resource) looks only at that
// slice's hosts.
//
// A Cluster is safe for concurrent use.
type Cluster struct {
	mu   sync.Mutex
	spec Spec

	resIndex map[string]resID
	resNames []string

	nodes       []node
	slices      []sliceInfo
	sliceByName map[string]int32
	classes     []*class
	byRes       map[resID][]*class
	byLabel     map[string][]*class // key "\x00" value

	groups  map[string]*group
	pending []*group // creation order
	seq     int

	// scan makes every bundle look at every host (tests compare it with
	// the indexed search).
	scan bool

	// services are the applications deployed as a backend.Server, by
	// name; svcMu orders Deploy and Delete (which take mu themselves).
	svcMu    sync.Mutex
	services map[string]*service
}

type sliceInfo struct {
	name  string
	item  *resolved
	first int32 // index of worker 0
	hosts int32
}

type node struct {
	class      *class
	state      *state
	avail      []int64 // free resources, aligned with class.res
	pos        int32   // position in class.members
	slice      int32   // -1 for a CPU-only node
	worker     int32   // worker id; the ordinal for a CPU-only node
	sliceAvail int64   // the free amount of the slice-name resource
}

// class groups hosts that share every label but the slice name and every
// total resource but the slice-name one.
type class struct {
	item    *resolved
	worker  int
	labels  map[string]string
	res     []resID // sorted
	total   []int64
	members []int32 // node indices, increasing
	states  []*state
}

// state is the set of a class's members with the same free resources.
type state struct {
	avail []int64
	set   bitset
	n     int
}

func (cl *class) index(id resID) int {
	for k, r := range cl.res {
		if r == id {
			return k
		}
	}
	return -1
}

// NewCluster builds the simulated cluster of a spec; every host starts idle.
func NewCluster(spec Spec) (*Cluster, error) {
	rs, errs := spec.resolve(field.NewPath("items"))
	if len(errs) > 0 {
		return nil, errs
	}
	c := &Cluster{
		spec:        specOf(rs),
		resIndex:    map[string]resID{},
		sliceByName: map[string]int32{},
		byRes:       map[resID][]*class{},
		byLabel:     map[string][]*class{},
		groups:      map[string]*group{},
	}
	total := 0
	for _, r := range rs {
		total += r.item.Count * r.hostsPerItem
	}
	c.nodes = make([]node, 0, total)
	buf := make([]int64, 0, total*6)
	classOf := map[string][]*class{}
	keys := map[*resolved]string{}
	walkHosts(rs, func(r *resolved, slice string, worker, cpuIndex int) {
		key, ok := keys[r]
		if !ok {
			key = shapeKey(r)
			keys[r] = key
		}
		cls := classOf[key]
		w := max(worker, 0)
		for len(cls) <= w {
			cls = append(cls, nil)
		}
		cl := cls[w]
		if cl == nil {
			cl = c.newClass(r, worker)
			cls[w] = cl
			classOf[key] = cls
		}
		ni := int32(len(c.nodes))
		n := node{class: cl, pos: int32(len(cl.members)), slice: -1, worker: int32(worker)}
		if slice != "" {
			if worker == 0 {
				c.sliceByName[slice] = int32(len(c.slices))
				c.slices = append(c.slices, sliceInfo{name: slice, item: r, first: ni, hosts: int32(r.hostsPerItem)})
			}
			n.slice = int32(len(c.slices) - 1)
			n.sliceAvail = unit
		} else {
			n.worker = int32(cpuIndex)
		}
		start := len(buf)
		buf = append(buf, cl.total...)
		n.avail = buf[start:len(buf):len(buf)]
		cl.members = append(cl.members, ni)
		c.nodes = append(c.nodes, n)
	})
	for _, cl := range c.classes {
		st := &state{avail: slices.Clone(cl.total), set: fullBitset(len(cl.members)), n: len(cl.members)}
		cl.states = []*state{st}
		for _, ni := range cl.members {
			c.nodes[ni].state = st
		}
	}
	return c, nil
}

func shapeKey(r *resolved) string {
	it := r.item
	return strings.Join([]string{it.PodType, it.Topology, strconv.Itoa(it.ChipsPerHost), strconv.Itoa(it.CPU), strconv.FormatInt(int64(it.Memory), 10)}, "|")
}

func (c *Cluster) intern(name string) resID {
	if id, ok := c.resIndex[name]; ok {
		return id
	}
	id := resID(len(c.resNames))
	c.resIndex[name] = id
	c.resNames = append(c.resNames, name)
	return id
}

func (c *Cluster) newClass(r *resolved, worker int) *class {
	res := map[string]float64{
		rayvocab.ResourceCPU:    float64(r.item.CPU),
		rayvocab.ResourceMemory: float64(r.item.Memory),
	}
	var labels map[string]string
	if r.gen != nil {
		for k, v := range tpuResources(r, "", worker) {
			if k != "" { // the slice-name resource is kept per node
				res[k] = v
			}
		}
		labels = tpuLabels(r, worker)
	}
	cl := &class{item: r, worker: worker, labels: labels}
	type kv struct {
		id resID
		v  int64
	}
	// Interning in name order gives every resource an id that depends
	// only on the spec: classes are made in host order, and a class's new
	// names get the next ids in sorted order. Ids order the terms of a
	// score, and a float sum depends on the order of its terms.
	list := make([]kv, 0, len(res))
	for _, k := range sortedKeys(res) {
		list = append(list, kv{c.intern(k), toFixed(res[k])})
	}
	slices.SortFunc(list, func(a, b kv) int { return int(a.id) - int(b.id) })
	for _, e := range list {
		cl.res = append(cl.res, e.id)
		cl.total = append(cl.total, e.v)
		c.byRes[e.id] = append(c.byRes[e.id], cl)
	}
	for _, k := range sortedKeys(labels) {
		lk := k + "\x00" + labels[k]
		c.byLabel[lk] = append(c.byLabel[lk], cl)
	}
	c.classes = append(c.classes, cl)
	return cl
}

// Spec returns the cluster's spec with every default filled in.
func (c *Cluster) Spec() Spec {
	if !c.ok() {
		return Spec{}
	}
	return Spec{Items: slices.Clone(c.spec.Items)}
}

// NumHosts is the number of hosts.
func (c *Cluster) NumHosts() int {
	if !c.ok() {
		return 0
	}
	return len(c.nodes)
}

// NumSlices is the number of TPU slices.
func (c *Cluster) NumSlices() int {
	if !c.ok() {
		return 0
	}
	return len(c.slices)
}

// nodeName is the host name of node ni.
func (c *Cluster) nodeName(ni int32) string {
	n := &c.nodes[ni]
	if n.slice < 0 {
		return cpuHostName(int(n.worker))
	}
	return hostName(c.slices[n.slice].name, int(n.worker))
}

// lookup finds a node by host name without a name index: a CPU-only node
// is cpu-<i>, a TPU host <slice>-w<worker>.
func (c *Cluster) lookup(name string) (int32, bool) {
	if rest, ok := strings.CutPrefix(name, "cpu-"); ok {
		i, err := strconv.Atoi(rest)
		if err != nil || i < 0 {
			return 0, false
		}
		// CPU-only nodes are few; walk the classes without TPU.
		for _, cl := range c.classes {
			if cl.item.gen != nil {
				continue
			}
			for _, ni := range cl.members {
				if int(c.nodes[ni].worker) == i {
					return ni, true
				}
			}
		}
		return 0, false
	}
	slice, w, ok := cutLast(name, "-w")
	if !ok {
		return 0, false
	}
	si, ok := c.sliceByName[slice]
	if !ok {
		return 0, false
	}
	wi, err := strconv.Atoi(w)
	if err != nil || wi < 0 || wi >= int(c.slices[si].hosts) || strconv.Itoa(wi) != w {
		return 0, false
	}
	return c.slices[si].first + int32(wi), true
}

// host describes node ni.
func (c *Cluster) host(ni int32) Host {
	n := &c.nodes[ni]
	if n.slice < 0 {
		return hostOf(n.class.item, "", -1, int(n.worker))
	}
	return hostOf(n.class.item, c.slices[n.slice].name, int(n.worker), -1)
}

// Host returns the host with the given name.
func (c *Cluster) Host(name string) (Host, bool) {
	if !c.ok() {
		return Host{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.lookup(name)
	if !ok {
		return Host{}, false
	}
	return c.host(ni), true
}

// Available returns the free resources of a host (nil if there is none by
// that name).
func (c *Cluster) Available(name string) map[string]float64 {
	if !c.ok() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.lookup(name)
	if !ok {
		return nil
	}
	n := &c.nodes[ni]
	out := make(map[string]float64, len(n.avail)+1)
	for k, id := range n.class.res {
		out[c.resNames[id]] = fromFixed(n.avail[k])
	}
	if n.slice >= 0 {
		out[c.slices[n.slice].name] = fromFixed(n.sliceAvail)
	}
	return out
}

// labelOf returns node ni's label k.
func (c *Cluster) labelOf(ni int32, k string) (string, bool) {
	n := &c.nodes[ni]
	if k == rayvocab.LabelTPUSliceName {
		if n.slice < 0 {
			return "", false
		}
		return c.slices[n.slice].name, true
	}
	v, ok := n.class.labels[k]
	return v, ok
}

// restate moves node ni to the state of its current free resources.
func (c *Cluster) restate(ni int32) {
	n := &c.nodes[ni]
	if slices.Equal(n.state.avail, n.avail) {
		return
	}
	cl := n.class
	old := n.state
	old.set.clear(int(n.pos))
	old.n--
	var st *state
	for _, s := range cl.states {
		if slices.Equal(s.avail, n.avail) {
			st = s
			break
		}
	}
	if st == nil {
		st = &state{avail: slices.Clone(n.avail), set: newBitset(len(cl.members))}
		cl.states = append(cl.states, st)
	}
	st.set.set(int(n.pos))
	st.n++
	n.state = st
	if old.n == 0 {
		i := slices.Index(cl.states, old)
		cl.states[i] = cl.states[len(cl.states)-1]
		cl.states[len(cl.states)-1] = nil
		cl.states = cl.states[:len(cl.states)-1]
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

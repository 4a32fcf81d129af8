package sim

import (
	"bufio"
	"errors"
	"fmt"
	"html"
	"io"
	"math"

	"github.com/raytpu/raytpu/tpu"
)

// SVG geometry, in pixels.
const (
	svgCell     = 22
	svgGap      = 2
	svgMargin   = 16
	svgTitle    = 22
	svgLayerGap = 14
	svgLegend   = 18
)

// hostColors fill chips by worker id; groupColors outline bundles by group.
var (
	hostColors  = []string{"#cfe2f3", "#d9ead3", "#fff2cc", "#f4cccc", "#d9d2e9", "#fce5cd", "#d0e0e3", "#ead1dc"}
	groupColors = []string{"#1155cc", "#cc0000", "#38761d", "#b45f06", "#741b47", "#134f5c", "#7f6000", "#351c75"}
)

// RenderSVG draws every TPU slice of the cluster as its chip grid (a 2D
// topology AxB as A rows of B columns; a 3D one AxBxC as A panels side by
// side, labelled x=0, x=1, ..., each B rows (y) of C columns (z)), chips
// filled by host, and outlines the chips each bundle of the
// given placements holds, in its group's colour, labelled with the bundle
// index. A bundle of n TPU takes its host's next n chips in the drawing's
// order; a host's chips form a block as Ray lays workers out (2x2 for four
// chips on a 2D slice, 2x2x1 on a 3D one). Bundles on CPU-only nodes are
// not drawn. The bytes depend only on the cluster and the placements.
func RenderSVG(w io.Writer, c *Cluster, placements ...Placement) error {
	if err := c.usable("RenderSVG"); err != nil {
		return err
	}
	if w == nil {
		return errors.New("sim: RenderSVG: nil writer; pass where the SVG goes (a file, a bytes.Buffer)")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	bw := bufio.NewWriter(w)

	// Bundles per host, groups in order of first appearance.
	perHost := map[int32][]held{}
	var groups []placedBundle // one per group: its first bundle, for the legend
	groupIdx := map[string]int{}
	counts := map[string]int{}
	unplaced := map[string]int{}
	offCPU := 0
	for _, p := range placements {
		if p == nil || p.placedBundles() == nil {
			continue
		}
		for _, b := range p.placedBundles() {
			gi, ok := groupIdx[b.group]
			if !ok {
				gi = len(groups)
				groupIdx[b.group] = gi
				groups = append(groups, b)
			}
			counts[b.group]++
			if b.node == "" {
				unplaced[b.group]++
				continue
			}
			ni, ok := c.lookup(b.node)
			if !ok || c.nodes[ni].slice < 0 {
				offCPU++
				continue
			}
			perHost[ni] = append(perHost[ni], held{group: gi, index: b.index, chips: int(math.Ceil(b.tpu))})
		}
	}

	// Layout.
	type panel struct {
		s      *sliceInfo
		dims   [3]int // layers, rows, cols
		block  [3]int
		w, h   int
		y      int
		linear bool
	}
	var panels []panel
	width, y := 2*svgMargin+320, svgMargin
	for i := range c.slices {
		s := &c.slices[i]
		d := s.item.topo.Dims()
		p := panel{s: s, y: y}
		if len(d) == 2 {
			p.dims = [3]int{1, d[0], d[1]}
		} else {
			p.dims = [3]int{d[0], d[1], d[2]}
		}
		p.block, p.linear = hostBlock(s.item.topo, s.item.item.ChipsPerHost)
		gridW := p.dims[2]*(svgCell+svgGap) - svgGap
		p.w = p.dims[0]*gridW + (p.dims[0]-1)*svgLayerGap
		p.h = svgTitle + p.dims[1]*(svgCell+svgGap) - svgGap
		if p.dims[0] > 1 {
			p.h += 14
		}
		width = max(width, 2*svgMargin+p.w)
		y += p.h + svgMargin
		panels = append(panels, p)
	}
	legendY := y
	height := legendY + len(groups)*svgLegend + svgMargin
	if offCPU > 0 {
		height += svgLegend
	}

	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	for _, p := range panels {
		s := p.s
		it := s.item
		fmt.Fprintf(bw, `<g id="%s">`+"\n", esc(s.name))
		fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`, svgMargin, p.y+14, esc(s.name))
		layout := ""
		if p.dims[0] > 1 {
			layout = "; panels x, rows y, columns z"
		}
		fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#555555">%s %s, %s of %d chips%s</text>`+"\n",
			svgMargin+len(s.name)*8+12, p.y+14, esc(it.gen.Name), it.topo, plural(int(s.hosts), "host"), it.item.ChipsPerHost, layout)
		gridTop := p.y + svgTitle
		if p.dims[0] > 1 {
			gridTop += 14
		}
		gridW := p.dims[2]*(svgCell+svgGap) - svgGap
		// Chip owner: worker and its local chip index, by position.
		chipsPerHost := it.item.ChipsPerHost
		var bundles [][]held
		for wk := range int(s.hosts) {
			bundles = append(bundles, perHost[s.first+int32(wk)])
		}
		for layer := range p.dims[0] {
			x0 := svgMargin + layer*(gridW+svgLayerGap)
			if p.dims[0] > 1 {
				// A 3-D slice AxBxC draws one panel per position on its
				// first dimension (x), each with y as rows and z as columns.
				fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#555555">x=%d</text>`+"\n", x0, gridTop-4, layer)
			}
			for r := range p.dims[1] {
				for col := range p.dims[2] {
					wk, local := chipOwner([3]int{layer, r, col}, p.dims, p.block, p.linear, chipsPerHost)
					x, yy := x0+col*(svgCell+svgGap), gridTop+r*(svgCell+svgGap)
					fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#999999" stroke-width="0.5"><title>%s chip %d</title></rect>`+"\n",
						x, yy, svgCell, svgCell, hostColors[wk%len(hostColors)], esc(hostName(s.name, wk)), local)
					if wk >= len(bundles) {
						continue
					}
					if h, ok := bundleAt(bundles[wk], local); ok {
						col := groupColors[h.group%len(groupColors)]
						fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="%s" stroke-width="2"/>`, x+1, yy+1, svgCell-2, svgCell-2, col)
						fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle" font-size="9" fill="%s">%d</text>`+"\n", x+svgCell/2, yy+svgCell/2+3, col, h.index)
					}
				}
			}
		}
		bw.WriteString("</g>\n")
	}
	for i, g := range groups {
		yy := legendY + i*svgLegend
		col := groupColors[i%len(groupColors)]
		label := g.group
		if g.name != "" {
			label += " (" + g.name + ")"
		}
		fmt.Fprintf(bw, `<rect x="%d" y="%d" width="12" height="12" fill="none" stroke="%s" stroke-width="2"/>`, svgMargin, yy, col)
		text := label + ": " + plural(counts[g.group], "bundle")
		if n := unplaced[g.group]; n > 0 {
			text += fmt.Sprintf(", %d not placed", n)
		}
		fmt.Fprintf(bw, `<text x="%d" y="%d">%s</text>`+"\n", svgMargin+20, yy+10, esc(text))
	}
	if offCPU > 0 {
		fmt.Fprintf(bw, `<text x="%d" y="%d" fill="#555555">%s on CPU-only nodes not drawn</text>`+"\n", svgMargin, legendY+len(groups)*svgLegend+10, plural(offCPU, "bundle"))
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// held is a bundle as drawn on its host: group (legend order), bundle
// index, and the chips it takes.
type held struct{ group, index, chips int }

// bundleAt finds the bundle holding a host's local chip: bundles take
// chips in order.
func bundleAt(hs []held, local int) (held, bool) {
	n := 0
	for _, h := range hs {
		if local < n+h.chips {
			return h, true
		}
		n += h.chips
	}
	return held{}, false
}

// hostBlock returns the block of chips one host covers in (layer, row,
// col) order, or linear when hosts do not tile the grid in blocks.
func hostBlock(t tpu.Topology, chipsPerHost int) ([3]int, bool) {
	d := t.Dims()
	var dims, cands [3]int
	if len(d) == 2 {
		dims = [3]int{1, d[0], d[1]}
	} else {
		dims = [3]int{d[0], d[1], d[2]}
	}
	switch {
	case chipsPerHost >= t.Chips():
		return dims, false
	case chipsPerHost == 1:
		cands = [3]int{1, 1, 1}
	case chipsPerHost == 4 && len(d) == 2:
		cands = [3]int{1, 2, 2}
	case chipsPerHost == 8 && len(d) == 2:
		cands = [3]int{1, 2, 4}
	case chipsPerHost == 4:
		cands = [3]int{2, 2, 1}
	default:
		return [3]int{}, true
	}
	for i := range 3 {
		if cands[i] > dims[i] || dims[i]%cands[i] != 0 {
			return [3]int{}, true
		}
	}
	return cands, false
}

// chipOwner maps a chip position to its worker id and the chip's index on
// that host.
func chipOwner(pos, dims, block [3]int, linear bool, chipsPerHost int) (int, int) {
	if linear {
		i := (pos[0]*dims[1]+pos[1])*dims[2] + pos[2]
		return i / chipsPerHost, i % chipsPerHost
	}
	var wdims, wpos, lpos [3]int
	for i := range 3 {
		wdims[i] = dims[i] / block[i]
		wpos[i] = pos[i] / block[i]
		lpos[i] = pos[i] % block[i]
	}
	worker := (wpos[0]*wdims[1]+wpos[1])*wdims[2] + wpos[2]
	local := (lpos[0]*block[1]+lpos[1])*block[2] + lpos[2]
	return worker, local
}

func esc(s string) string { return html.EscapeString(s) }

package podrunner

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// A container's root is the host's, assembled in the container's private
// mount namespace (the host's mounts are untouched and nothing is written
// to a host directory other than the runner's Root):
//
//   - a tmpfs is mounted over /tmp of that namespace, and the root is built
//     in /tmp/root: each entry of the host's / is recreated there (a
//     directory bind-mounted recursively, a symlink copied, a file bound),
//     except /proc (a new proc of the container's PID namespace), /tmp (the
//     container's own, a directory under the pod's root) and /sys, /dev
//     (bound from the namespace's);
//   - a mount path that does not exist (/raytpu/working_dir,
//     /home/ray/...) is made in the tmpfs: where its parent is a host
//     directory, that directory is first shadowed by a tmpfs that re-binds
//     each of its entries, so the host keeps no trace;
//   - each volumeMount is then bound at its path (read-only when asked),
//     and the container's command runs chrooted there, in its workingDir.
type rootfs struct {
	tools    tools
	root     string // the root's path in the namespace
	tmp      string // host directory that is the container's /tmp
	lines    []string
	created  map[string]bool // container paths made in a tmpfs of ours
	shadowed map[string]bool // container directories that are tmpfs of ours
}

// tools are the host programs the runner runs, found on PATH at Start.
type tools struct{ ip, unshare, nsenter, mount, chroot, hostname, mkdir, touch, ln, chmod string }

func q(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func newRootfs(t tools, tmp string) (*rootfs, error) {
	r := &rootfs{tools: t, root: "/tmp/root", tmp: tmp, created: map[string]bool{}, shadowed: map[string]bool{"/": true}}
	r.lines = append(r.lines, "set -e")
	r.add(t.mount, "-t", "tmpfs", "-o", "mode=1777", "podrunner", "/tmp")
	r.add(t.mkdir, r.root)
	r.add(t.mount, "-t", "tmpfs", "-o", "mode=755", "rootfs", r.root)
	ents, err := os.ReadDir("/")
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		name := "/" + e.Name()
		switch name {
		case "/proc":
			r.add(t.mkdir, r.at(name))
			r.add(t.mount, "-t", "proc", "proc", r.at(name))
		case "/tmp":
			r.add(t.mkdir, r.at(name))
			r.add(t.mount, "--bind", tmp, r.at(name))
		default:
			if err := r.replicate(name); err != nil {
				return nil, err
			}
		}
		r.created[name] = true
	}
	return r, nil
}

func (r *rootfs) add(args ...string) {
	qs := make([]string, len(args))
	for i, a := range args {
		qs[i] = q(a)
	}
	r.lines = append(r.lines, strings.Join(qs, " "))
}

// at is the namespace path of container path p.
func (r *rootfs) at(p string) string { return r.root + p }

// replicate recreates host entry p at p in the root.
func (r *rootfs) replicate(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		r.add(r.tools.ln, "-s", target, r.at(p))
	case fi.IsDir():
		r.add(r.tools.mkdir, r.at(p))
		r.add(r.tools.mount, "--rbind", p, r.at(p))
	default:
		r.add(r.tools.touch, r.at(p))
		r.add(r.tools.mount, "--bind", p, r.at(p))
	}
	return nil
}

// hostPath is where container path p is on the host, and whether the
// runner may create entries there (the container's own /tmp).
func (r *rootfs) hostPath(p string) (string, bool) {
	if p == "/tmp" || strings.HasPrefix(p, "/tmp/") {
		return filepath.Join(r.tmp, strings.TrimPrefix(p, "/tmp")), true
	}
	return p, false
}

func (r *rootfs) exists(p string) bool {
	if r.created[p] {
		return true
	}
	if r.shadowed[path.Dir(p)] {
		return false
	}
	h, _ := r.hostPath(p)
	_, err := os.Lstat(h)
	return err == nil
}

// ensure makes container path p exist, as a file when file is set.
func (r *rootfs) ensure(p string, file bool) error {
	cur := "/"
	comps := strings.Split(strings.Trim(p, "/"), "/")
	for i, c := range comps {
		if c == "" {
			continue
		}
		next := path.Join(cur, c)
		last := i == len(comps)-1
		if r.exists(next) {
			cur = next
			continue
		}
		if h, private := r.hostPath(next); private {
			var err error
			if last && file {
				err = os.WriteFile(h, nil, 0o644)
			} else {
				err = os.MkdirAll(h, 0o755)
			}
			if err != nil {
				return err
			}
			cur = next
			continue
		}
		if !r.shadowed[cur] {
			if err := r.shadow(cur); err != nil {
				return fmt.Errorf("making mount point %s: %w", p, err)
			}
		}
		if last && file {
			r.add(r.tools.touch, r.at(next))
		} else {
			r.add(r.tools.mkdir, r.at(next))
			r.shadowed[next] = true // a directory of the tmpfs, with nothing of the host's
		}
		r.created[next] = true
		cur = next
	}
	return nil
}

// resolve follows the symlinks of the host's root along container path p
// (/var/run -> /run), as a container runtime resolves a mount's
// destination inside the container's root: the mount then lands where the
// container's processes look.
func (r *rootfs) resolve(p string) (string, error) {
	comps := strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/")
	cur := "/"
	for hops := 0; len(comps) > 0; {
		c := comps[0]
		comps = comps[1:]
		if c == "" {
			continue
		}
		next := path.Join(cur, c)
		h, _ := r.hostPath(next)
		fi, err := os.Lstat(h)
		if r.created[next] && r.shadowed[next] || err != nil || fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("too many symlinks in %s", p)
		}
		target, err := os.Readlink(h)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		comps = append(strings.Split(strings.Trim(target, "/"), "/"), comps...)
	}
	return cur, nil
}

// shadow turns host directory d of the root into a tmpfs holding the
// same entries, so that new entries can be made in it.
func (r *rootfs) shadow(d string) error {
	ents, err := os.ReadDir(d)
	if err != nil {
		return err
	}
	r.add(r.tools.mount, "-t", "tmpfs", "-o", "mode=755", "shadow", r.at(d))
	r.shadowed[d] = true
	for _, e := range ents {
		p := path.Join(d, e.Name())
		if err := r.replicate(p); err != nil {
			return err
		}
		r.created[p] = true
	}
	return nil
}

// script is the shell program that builds the root, binds ms, and runs
// argv chrooted in workdir; it runs as `sh -c script sh argv...`.
func (r *rootfs) script(hostname, workdir string, ms []mount) (string, error) {
	for i := range ms {
		m := &ms[i]
		dst, err := r.resolve(m.dst)
		if err != nil {
			return "", fmt.Errorf("volumeMount %s: %w", m.dst, err)
		}
		m.dst = dst
		fi, err := os.Stat(m.src)
		if err != nil {
			return "", fmt.Errorf("volumeMount %s: %w", m.dst, err)
		}
		if err := r.ensure(m.dst, !fi.IsDir()); err != nil {
			return "", err
		}
	}
	if err := r.ensure(workdir, false); err != nil {
		return "", err
	}
	r.add(r.tools.hostname, hostname)
	for _, m := range ms {
		r.add(r.tools.mount, "--bind", m.src, r.at(m.dst))
		if m.readOnly {
			r.add(r.tools.mount, "-o", "remount,bind,ro", r.at(m.dst))
		}
	}
	r.lines = append(r.lines, "cd /", fmt.Sprintf(`exec %s %s /bin/sh -c 'cd "$0" && exec "$@"' %s "$@"`, q(r.tools.chroot), q(r.root), q(workdir)))
	return strings.Join(r.lines, "\n"), nil
}

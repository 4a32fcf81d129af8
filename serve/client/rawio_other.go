//go:build !linux

package client

import "net"

// wrapRawIO returns c unchanged: raw socket I/O is for Linux only.
func wrapRawIO(c net.Conn) net.Conn { return c }

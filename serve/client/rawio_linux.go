package client

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIOConn is a TCP or Unix socket whose reads and writes are issued as
// raw system calls, still waiting for readiness through the runtime's
// network poller.
//
// Go's socket I/O enters every read and write through the runtime's
// blocking-syscall path, and the first such call after the process was
// idle wakes the runtime's monitor thread (sysmon), which then runs on a
// 20 µs tick until it sees the process idle again. A gRPC client that
// waits for Serve between calls pays that wake-up, and the thread
// switches around it, on nearly every call. The socket is non-blocking
// (the poller needs it so), so a read or write returns at once, with data
// or EAGAIN, and needs none of that bookkeeping: on EAGAIN it parks on the
// poller exactly as the net package does. Deadlines and Close keep
// working (the poller owns both).
type rawIOConn struct {
	net.Conn
	raw     syscall.RawConn
	network string
}

// wrapRawIO returns c with raw reads and writes when c is a TCP or Unix
// socket, and c unchanged otherwise.
func wrapRawIO(c net.Conn) net.Conn {
	var network string
	switch c.(type) {
	case *net.TCPConn:
		network = "tcp"
	case *net.UnixConn:
		network = "unix"
	default:
		return c
	}
	raw, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		return c
	}
	return &rawIOConn{Conn: c, raw: raw, network: network}
}

// SyscallConn is the socket's own (gRPC's channelz reads its options).
func (c *rawIOConn) SyscallConn() (syscall.RawConn, error) { return c.raw, nil }

func (c *rawIOConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: c.network, Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

func (c *rawIOConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.raw.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err // the poller's: closed, deadline; already a *net.OpError
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *rawIOConn) Write(p []byte) (int, error) {
	var done int
	var errno syscall.Errno
	err := c.raw.Write(func(fd uintptr) bool {
		for done < len(p) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
			switch e {
			case 0:
				done += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return done, err
	case errno != 0:
		return done, c.opError("write", os.NewSyscallError("write", errno))
	}
	return done, nil
}

package ray_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/raytpu/raytpu/ray"
)

func ExampleWithRequestTimeout() {
	// A server that accepts connections and never answers.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()

	c, _ := ray.NewClient("http://"+l.Addr().String(), ray.WithRequestTimeout(200*time.Millisecond))
	start := time.Now()
	_, err := c.ListJobs(context.Background())
	fmt.Println("unreachable:", errors.Is(err, ray.ErrUnreachable))
	fmt.Println("within a second:", time.Since(start) < time.Second)
	// Output:
	// unreachable: true
	// within a second: true
}

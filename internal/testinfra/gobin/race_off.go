//go:build !race

package gobin

const race = false

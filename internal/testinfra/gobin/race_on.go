//go:build race

package gobin

const race = true

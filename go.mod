module github.com/raytpu/raytpu

go 1.26.0

require (
	github.com/coder/websocket v1.8.15
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/compress v1.20.4
	github.com/spf13/cobra v1.10.2
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sync v0.24.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)

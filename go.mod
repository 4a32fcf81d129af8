module github.com/raytpu/raytpu

go 1.26

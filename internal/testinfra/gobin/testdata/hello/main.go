// hello is the program gobin's test builds.
package main

import "fmt"

func main() { fmt.Println("hello from gobin") }

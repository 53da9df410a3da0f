// Command hello is the floor the bench measures a short pantty process
// against: a Go hello-world (fmt.Println), built with the same toolchain.
package main

import "fmt"

func main() { fmt.Println("hello") }

// Command vprog prints version.String, for the version package's test that
// builds it from the checkout.
package main

import (
	"fmt"

	"github.com/gopmd/gopmd/internal/version"
)

func main() { fmt.Print(version.String("vprog")) }

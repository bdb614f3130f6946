// Package standalone holds the repository-wide check that gopmd stands
// alone: no file cites notes that live outside the repository or a path of
// a build machine, and every citation of a hardware reference section
// (docs/hardware-enetc.md §N, docs/hardware-fec.md §N) names a heading that
// exists. The check is its test; the package has no API.
package standalone

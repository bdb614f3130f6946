// Package standalone holds the repository-wide checks that gopmd stands
// alone: no file cites notes that live outside the repository or a path of
// a build machine, and every citation of a hardware reference section
// (docs/hardware-enetc.md §N, docs/hardware-fec.md §N) names a heading that
// exists; and every Example, copied as go/doc shows it, builds and runs in
// a fresh module of its own (TestExamplesStandAlone), so a reader can
// start from any of them. The checks are its tests; the package has no API.
package standalone

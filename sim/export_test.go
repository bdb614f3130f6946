package sim

// For the external tests of this directory (package sim_test).
var VethPair = vethPair

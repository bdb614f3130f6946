package enetc_test

import "github.com/gopmd/gopmd/enetc/model"

// modelField is a bit or mask of the model's transcription, by the
// reference's name (model.Field).
func modelField(name string) uint64 {
	v, ok := model.Field(name)
	if !ok {
		panic("enetc/model defines no field " + name)
	}
	return v
}

// modelReg is the BAR0 offset of a register of the model's table, by the
// reference's name (model.Lookup).
func modelReg(name string) uint32 {
	r, ok := model.Lookup(name)
	if !ok {
		panic("enetc/model has no register " + name)
	}
	return r.Offset
}

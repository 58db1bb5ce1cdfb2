package sampledata_test

import (
	"context"
	"testing"

	"github.com/addrclean/addrclean/gazetteer"
	sampledata "github.com/addrclean/addrclean/sample_data"
)

func TestReferenceLoads(t *testing.T) {
	ix, err := gazetteer.Load(context.Background(), sampledata.Reference())
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() < 5000 {
		t.Fatalf("%d reference addresses, want at least 5000", ix.Len())
	}
	if len(sampledata.ReferenceBytes()) == 0 {
		t.Fatal("no embedded bytes")
	}
}

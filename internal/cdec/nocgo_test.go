//go:build !cgo

package cdec

import (
	"context"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/exitcode"
)

func TestNoCgo(t *testing.T) {
	_, err := Load("")
	if exitcode.Of(err) != exitcode.NoLibrary || !strings.Contains(err.Error(), "without cgo") {
		t.Errorf("Load: %v", err)
	}
	var d Decoder
	if err := d.Decode(context.Background(), strings.NewReader(""), nil, nil); exitcode.Of(err) != exitcode.NoLibrary {
		t.Errorf("Decode: %v", err)
	}
}

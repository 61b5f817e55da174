//go:build !cgo

package cdec

import (
	"context"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/cli"
)

func TestNoCgo(t *testing.T) {
	_, err := Load("")
	if cli.CodeOf(err) != cli.ExitLibrary || !strings.Contains(err.Error(), "without cgo") {
		t.Errorf("Load: %v", err)
	}
	var d Decoder
	if err := d.Decode(context.Background(), strings.NewReader(""), nil, nil); cli.CodeOf(err) != cli.ExitLibrary {
		t.Errorf("Decode: %v", err)
	}
}

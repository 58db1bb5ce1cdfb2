package refimport

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/atomicfile"
)

// WriteFile writes the reference file out with conv (PAF, or
// OpenAddresses of a country) through a temporary file beside it, loads
// the result as the embedded service would, and renames it into place
// only then: a failed conversion, or one that does not load, leaves no
// out, and an old out stays as it was.
func WriteFile(ctx context.Context, out string, conv func(io.Writer) (Stats, error)) (st Stats, err error) {
	err = atomicfile.Write(out, func(tmp *os.File) error {
		if st, err = conv(tmp); err != nil {
			return err
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := gazetteer.Load(ctx, tmp); err != nil {
			return fmt.Errorf("the converted file does not load: %w", err)
		}
		return nil
	})
	return st, err
}

package runs

import (
	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/writers"
)

// InputTempDir makes the directory for the temporary files of a workbook
// input (readers.Options.TmpDir), where excelize unpacks a large sheet or
// its shared strings: beside the first of outputs that is a file, named
// like its temporary outputs, so that when the run is killed the next
// run's Open removes it with them (a live run's is locked). It returns nil
// when the input is not a workbook or no output is a file; excelize then
// uses the system's temporary directory. The caller removes it once the
// input is closed.
func InputTempDir(input string, outputs []string) (*writers.TempDir, error) {
	if !readers.IsWorkbook(input) {
		return nil, nil
	}
	for _, out := range outputs {
		if out != "" && out != writers.Stdout {
			return writers.NewTempDir(out)
		}
	}
	return nil, nil
}

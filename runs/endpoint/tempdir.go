package endpoint

import (
	"os"
	"path/filepath"

	"github.com/addrclean/addrclean/readers"
	"github.com/addrclean/addrclean/writers"
)

// systemAnchor names, in the system's temporary directory, the directories
// of workbook inputs read by runs that write no file (outputs only to
// tables, a dry run): their temporary directories are made beside it, so
// one killed run's are found and removed by the next such run.
const systemAnchor = "addrclean-workbook"

// inputTempDir makes the directory for the temporary files of a workbook
// input (readers.Options.TmpDir), where excelize unpacks a large sheet or
// its shared strings: beside the first of outputs that is a file, named
// like its temporary outputs, so that when the run is killed the next
// run's Open removes it with them (a live run's is locked). A run with no
// file output gets one in the system's temporary directory, after it has
// removed the abandoned ones of earlier runs there. It returns nil when
// the input is not a workbook. The caller removes it once the input is
// closed.
func inputTempDir(input string, outputs []string) (*writers.TempDir, error) {
	if !readers.IsWorkbook(input) {
		return nil, nil
	}
	for _, out := range outputs {
		if out != "" && out != writers.Stdout {
			return writers.NewTempDir(out)
		}
	}
	anchor := filepath.Join(os.TempDir(), systemAnchor)
	writers.RemoveStaleTemps(anchor)
	return writers.NewTempDir(anchor)
}

package runs

import (
	"context"
	"errors"
	"io/fs"

	"github.com/addrclean/addrclean/journal"
)

// Peek opens, read only, the journal that Open would continue for this
// run, so that a dry run can count the rows it answers: nil when the run
// would keep none, start afresh or find none. It refuses as Open does (an
// unfinished journal without --resume, or one of another run), since the
// run itself would not start. Nothing is written; the caller closes the
// journal.
func (p Policy) Peek(ctx context.Context, path string, id func() (Identity, error)) (*journal.Journal, error) {
	if keep, _ := p.keeps(path); !keep {
		return nil, nil
	}
	if journal.Headless(path) {
		// The run starts afresh over it; Open would remove it (an older
		// addrclean's torn first line) before reading it.
		_, err := id()
		return nil, err
	}
	j, err := journal.Open(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, journalError(err)
	}
	who, err := id()
	if err == nil {
		var fresh bool
		if fresh, err = p.startOver(j.Info(), who.meta()); err == nil && !fresh {
			return j, nil
		}
	}
	_ = j.Close()
	return nil, err
}

package runfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/addrclean/addrclean/api"
)

// line is one JSONL row of a run output.
type line struct {
	lineNo     int
	row        int
	inKeys     []string // the input object's keys, in order
	inVals     []string
	inputLabel string
	response   *api.VerifyResponse
	errText    string
	// extra holds the other string or number members: decision, edit_*,
	// duplicates, first_row.
	extra map[string]string
}

var errNotObject = errors.New("not a JSON object")

// parseLine decodes one row, keeping the order of the input object's keys
// (a map would lose it).
func parseLine(b []byte) (line, error) {
	var l line
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return l, errNotObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return l, err
		}
		key, _ := tok.(string)
		switch key {
		case "row":
			var n json.Number
			if err := dec.Decode(&n); err != nil {
				return l, fmt.Errorf("row: %w", err)
			}
			v, err := n.Int64()
			if err != nil || v < 1 || v > 1<<40 {
				return l, fmt.Errorf("row %s: not a row number", n)
			}
			l.row = int(v)
		case "input":
			if err := l.input(dec); err != nil {
				return l, fmt.Errorf("input: %w", err)
			}
		case "input_label":
			if err := dec.Decode(&l.inputLabel); err != nil {
				return l, fmt.Errorf("input_label: %w", err)
			}
		case "response":
			l.response = new(api.VerifyResponse)
			if err := dec.Decode(l.response); err != nil {
				return l, fmt.Errorf("response: %w", err)
			}
		case "error":
			if err := dec.Decode(&l.errText); err != nil {
				return l, fmt.Errorf("error: %w", err)
			}
		default:
			var v any
			if err := dec.Decode(&v); err != nil {
				return l, fmt.Errorf("%s: %w", key, err)
			}
			switch v := v.(type) {
			case string:
				l.setExtra(key, v)
			case json.Number:
				l.setExtra(key, v.String())
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return l, err
	}
	if l.row == 0 {
		return l, errors.New(`no "row" member`)
	}
	return l, nil
}

func (l *line) setExtra(k, v string) {
	if l.extra == nil {
		l.extra = make(map[string]string)
	}
	l.extra[k] = v
}

func (l *line) input(dec *json.Decoder) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errNotObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		l.inKeys = append(l.inKeys, k)
		l.inVals = append(l.inVals, v)
	}
	_, err := dec.Token()
	return err
}

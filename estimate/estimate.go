package estimate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"

	"github.com/addrclean/addrclean/runstats"
)

// ErrPrice is wrapped by ParsePrice's errors.
var ErrPrice = errors.New("want an amount per call such as 0.004, 0.004 EUR, €0.004 or USD 0.01")

// Price is an amount per call with the currency as written around it.
// Amounts are decimal, so a bill is exact: 0.1 per call for 3 calls costs
// 0.3, never 0.30000000000000004.
type Price struct {
	text           string   // as written
	prefix, suffix string   // the currency, as written, with its spacing
	units          *big.Int // the amount in units of 10^-scale
	scale          int
	sep            byte // the decimal separator written: '.' or ','
}

// ParsePrice reads a price per call: one non-negative decimal number (with
// a point or a comma before its decimals, no thousands separators) and,
// before or after it, the currency as the user writes it ("EUR", "€",
// "USD ", "p"), kept as written for the bill.
func ParsePrice(s string) (Price, error) {
	start := strings.IndexAny(s, "0123456789")
	if start < 0 {
		return Price{}, fmt.Errorf("%q: no amount: %w", s, ErrPrice)
	}
	end, sep, digits := start, byte(0), strings.Builder{}
	for ; end < len(s); end++ {
		c := s[end]
		switch {
		case c >= '0' && c <= '9':
			digits.WriteByte(c)
		case (c == '.' || c == ',') && sep == 0 && end+1 < len(s) && s[end+1] >= '0' && s[end+1] <= '9':
			sep = c
		default:
			goto done
		}
	}
done:
	prefix, suffix := s[:start], s[end:]
	// A second number, a sign or thousands separators are not a price
	// this reads the same way as the user.
	if strings.ContainsAny(prefix+suffix, "0123456789-+") {
		return Price{}, fmt.Errorf("%q: %w", s, ErrPrice)
	}
	scale := 0
	if sep != 0 {
		scale = end - strings.IndexByte(s[start:end], sep) - start - 1
	}
	units, ok := new(big.Int).SetString(digits.String(), 10)
	if !ok {
		return Price{}, fmt.Errorf("%q: %w", s, ErrPrice)
	}
	return Price{text: s, prefix: prefix, suffix: suffix, units: units, scale: scale, sep: cmpSep(sep)}, nil
}

func cmpSep(sep byte) byte {
	if sep == 0 {
		return '.'
	}
	return sep
}

// String is the price as written.
func (p Price) String() string { return p.text }

// Currency is the currency as written, without spacing ("" if none).
func (p Price) Currency() string { return strings.TrimSpace(p.prefix + " " + p.suffix) }

// Times is the cost of n calls: the decimal amount (a point before the
// decimals, for machines) and the same amount as the user wrote prices
// (their separator and currency), with at least two decimals when the
// price has any.
func (p Price) Times(n int64) (amount, text string) {
	total := new(big.Int).Mul(p.units, big.NewInt(n))
	scale := p.scale
	if scale > 0 && scale < 2 {
		total.Mul(total, big.NewInt(10))
		scale = 2
	}
	digits := total.String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		amount = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	} else {
		amount = digits
	}
	shown := amount
	if p.sep == ',' {
		shown = strings.Replace(amount, ".", ",", 1)
	}
	return amount, p.prefix + shown + p.suffix
}

// Figures are a dry run's estimate: the counts, the time at the rate, the
// money at the price. They are the "estimate" object of --summary.
type Figures struct {
	runstats.Estimate
	// Rate is the run's --rate in calls per second; 0 is unlimited.
	Rate float64 `json:"rate"`
	// SecondsAtRate is the least time the calls take at Rate (the
	// limiter lets Burst calls go at once, then one per 1/Rate); null
	// when the rate is unlimited.
	SecondsAtRate *float64 `json:"seconds_at_rate"`
	// PricePerCall is --price-per-call as written; Currency the currency
	// in it.
	PricePerCall string `json:"price_per_call,omitempty"`
	Currency     string `json:"currency,omitempty"`
	// Cost is CallsToPay times the price, exact (null without a price);
	// CostText the same as the user writes money.
	Cost     *json.Number `json:"cost"`
	CostText string       `json:"cost_text,omitempty"`
}

// New adds the time at rate (with burst calls allowed at once) and, when
// price is not nil, the money to e.
func New(e runstats.Estimate, rate float64, burst int, price *Price) Figures {
	f := Figures{Estimate: e, Rate: rate}
	if rate > 0 {
		s := float64(max(e.CallsToPay-int64(max(burst, 1)), 0)) / rate
		f.SecondsAtRate = &s
	}
	if price != nil {
		sp := price.Spent(e.CallsToPay)
		f.PricePerCall, f.Currency, f.Cost, f.CostText = sp.PricePerCall, sp.Currency, &sp.Cost, sp.CostText
	}
	return f
}

// Spent is what calls cost at a price: the "spent" object of a run's
// --summary, beside its calls_made.
type Spent struct {
	Calls        int64       `json:"calls"`
	PricePerCall string      `json:"price_per_call"`
	Currency     string      `json:"currency,omitempty"`
	Cost         json.Number `json:"cost"`
	CostText     string      `json:"cost_text"`
}

// Spent is the cost of n calls at p.
func (p Price) Spent(n int64) Spent {
	amount, text := p.Times(n)
	return Spent{Calls: n, PricePerCall: p.String(), Currency: p.Currency(), Cost: json.Number(amount), CostText: text}
}

// Print writes the figures for people, under the dry run's mapping
// preview.
func (f Figures) Print(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "estimate (what the same command without --dry-run would do now):\n")
	fmt.Fprintf(&b, "  rows               %d\n", f.Rows)
	if f.RowsOtherShards > 0 {
		fmt.Fprintf(&b, "  other shards' rows %d (--shard: passed over, counted by their own runners)\n", f.RowsOtherShards)
	}
	fmt.Fprintf(&b, "  not sent           %d (Error without a call: no address or no country)\n", f.NotSent)
	fmt.Fprintf(&b, "  distinct requests  %d (after folding case and white space)\n", f.DistinctRequests)
	fmt.Fprintf(&b, "  journal answers    %d (--resume)\n", f.JournalAnswers)
	fmt.Fprintf(&b, "  cache answers      %d (--cache, within --cache-ttl)\n", f.CacheAnswers)
	fmt.Fprintf(&b, "  calls to pay       %d\n", f.CallsToPay)
	if f.SecondsAtRate != nil {
		fmt.Fprintf(&b, "  time at --rate %g  %s at least\n", f.Rate, time.Duration(*f.SecondsAtRate*float64(time.Second)).Round(time.Second))
	} else {
		fmt.Fprintf(&b, "  time at --rate     not bounded (unlimited rate)\n")
	}
	if f.Cost != nil {
		fmt.Fprintf(&b, "  cost               %s (%d calls at %s)\n", f.CostText, f.CallsToPay, f.PricePerCall)
	} else {
		fmt.Fprintf(&b, "  cost               pass --price-per-call AMOUNT (or ADDRCLEAN_PRICE_PER_CALL) to see it\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

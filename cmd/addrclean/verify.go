package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/countries"
	"github.com/addrclean/addrclean/internal/cliflag"
	"github.com/addrclean/addrclean/internal/logfmt"
	"github.com/addrclean/addrclean/writers"
)

// cmdVerify is 'addrclean verify': one address, human or JSON output.
func cmdVerify(ctx context.Context, args []string, s streams) error {
	fs := cliflag.New("verify", verifyUsage, s.err)
	var (
		city, region, postcode, country, language string
		asJSON                                    bool
		c                                         connectOptions
		timeout                                   time.Duration
		logFormat, logLevel                       string
	)
	fs.StringVar(&city, "city", "", "city or town")
	fs.StringVar(&region, "region", "", "region, county or state")
	fs.StringVar(&postcode, "postcode", "", "postcode or Eircode (sent as the last addressLine)")
	fs.StringVar(&country, "country", "", "country: ISO code or name (required)")
	fs.StringVar(&language, "language", "", "language `CODE` to search in (default: all)")
	fs.BoolVar(&asJSON, "json", false, "print the service's whole answer as JSON")
	fs.StringVar(&c.baseURL, "base-url", os.Getenv("ADDRCLEAN_BASE_URL"), "live service `URL` (env ADDRCLEAN_BASE_URL); empty = embedded local service")
	fs.StringVar(&c.apiKeyFile, "api-key-file", "", "file holding the API key (or env ADDRCLEAN_API_KEY)")
	fs.StringVar(&c.apiKeyFlag, "api-key", "", "refused: use --api-key-file or ADDRCLEAN_API_KEY")
	fs.StringVar(&c.reference, "reference", "", "reference address `CSV` for the embedded service (default: bundled sample)")
	fs.StringVar(&c.method, "method", "POST", "verify request method: POST or GET")
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "time limit of the request")
	fs.StringVar(&logFormat, "log-format", "auto", "auto, console or json")
	fs.StringVar(&logLevel, "log-level", "warn", "trace, debug, info, warn or error")
	lines, err := cliflag.Interspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(lines) == 0 && postcode == "" {
		fs.Usage()
		return usageErrorf("verify needs at least one address LINE")
	}
	if strings.TrimSpace(country) == "" {
		return usageErrorf("verify needs --country (an ISO code such as IE or GB, or a name)")
	}
	if iso, ok := countries.ISO(country); ok {
		country = iso
	}
	if postcode != "" {
		lines = append(lines, postcode)
	}
	log, err := logfmt.New(s.err, s.tty, logFormat, logLevel)
	if err != nil {
		return usageErrorf("%w", err)
	}
	c.workers = 1
	conn, err := connect(ctx, c, log)
	if err != nil {
		return err
	}
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := conn.Client.Verify(vctx, api.Address{Lines: lines, City: city, Region: region, Country: country, Language: language})
	if err != nil {
		if ctx.Err() != nil { // a signal, not --timeout: at the token or the request, exit 130
			return withCode(exitInterrupted, err)
		}
		return withCode(exitFatal, describeFatal(err, ""))
	}
	if asJSON {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		return enc.Encode(resp)
	}
	printVerdict(s.out, resp)
	return nil
}

// printVerdict prints a verify answer for a person.
func printVerdict(w io.Writer, r *api.VerifyResponse) {
	info := r.Information
	fmt.Fprintf(w, "%s  (%s, match level %s, complete %t)\n", r.Action, info.Status, info.MatchLevel, info.Complete)
	fmt.Fprintf(w, "  input:    %s\n", strings.Join(r.Input.Label, ", "))
	fmt.Fprintf(w, "  matched:  %s\n", writers.MarkChanges(r.Address.Label, r.Address.Highlights))
	if r.Form.Message.Value != "" {
		fmt.Fprintf(w, "  message:  %s\n", r.Form.Message.Value)
	}
	if r.Address.ID != "" {
		fmt.Fprintf(w, "  id:       %s\n", r.Address.ID)
	}
	if loc := r.Data.Location; loc != nil {
		fmt.Fprintf(w, "  location: %s, %s (%s)\n", strconv.FormatFloat(loc.Latitude, 'f', -1, 64), strconv.FormatFloat(loc.Longitude, 'f', -1, 64), loc.Accuracy)
	}
	d := info.Details
	var changed []string
	for _, e := range []struct{ name, v string }{
		{"organisation", d.Organization}, {"street", d.Street}, {"lines", d.AddressLines}, {"sub-building", d.SubBuildingNumber},
		{"building number", d.BuildingNumber}, {"city", d.City}, {"region", d.Region}, {"postcode", d.Postcode},
	} {
		if e.v != "" && e.v != api.DetailNone && e.v != api.DetailUnchanged {
			changed = append(changed, e.name+" "+strings.ToLower(e.v))
		}
	}
	if len(changed) > 0 {
		fmt.Fprintf(w, "  changes:  %s\n", strings.Join(changed, ", "))
	}
}

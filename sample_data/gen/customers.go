package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/sample_data/synth"
)

var customerHeader = []string{"Customer ID", "Name", "Address 1", "Address 2", "Town", "County", "Postcode", "Country"}

// foreign are addresses outside Ireland and the UK, and Irish ones that do
// not exist: the sample must show what a non-match looks like.
var foreign = [][]string{
	{"12 Rue des Lilas", "", "Lyon", "", "69003", "France"},
	{"Hauptstraße 5", "", "Berlin", "", "10115", "Germany"},
	{"742 Evergreen Terrace", "", "Springfield", "OR", "97403", "United States"},
	{"Calle Mayor 8", "3º B", "Madrid", "", "28013", "Spain"},
	{"Unit 99", "Imaginary Business Park", "Ennis", "Co. Clare", "", "Ireland"},
	{"The Lighthouse", "Nowhere Point", "", "", "", "Ireland"},
	{"1 Sesame Street", "", "", "", "", ""},
}

func personName(rng *rand.Rand) string {
	first := []string{"Aoife", "Seán", "Niamh", "Conor", "Siobhán", "Patrick", "Mary", "John", "Ciara",
		"Darragh", "Emma", "James", "Oliver", "Sophie", "Fiona", "Liam", "Gráinne", "Eoin", "Róisín", "David"}
	last := []string{"Murphy", "Kelly", "O'Sullivan", "Walsh", "Smith", "O'Brien", "Byrne", "Ryan",
		"O'Connor", "Doyle", "McCarthy", "Gallagher", "Jones", "Taylor", "Campbell", "Ní Bhriain"}
	return first[rng.IntN(len(first))] + " " + last[rng.IntN(len(last))]
}

// customerRows makes n rows of a messy CRM export from the reference.
func customerRows(recs []gazetteer.Record, n int) [][]string {
	rng := rand.New(rand.NewPCG(synth.SampleSeed, 99))
	p := synth.NewPerturber(synth.SampleSeed+1, recs)
	var rows [][]string
	id := 1000
	next := func() string { id++; return fmt.Sprintf("C%05d", id) }
	for len(rows) < n {
		k := len(rows)
		switch {
		case k%61 == 17:
			f := foreign[(k/61)%len(foreign)]
			rows = append(rows, append([]string{next(), personName(rng)}, f...))
			continue
		case k%47 == 30 && k > 50:
			// A duplicate customer: same address, new id, other case.
			d := append([]string(nil), rows[rng.IntN(k-10)]...)
			d[0], d[2] = next(), strings.ToUpper(d[2])
			rows = append(rows, d)
			continue
		case k == 250:
			rows = append(rows, []string{next(), personName(rng), "", "", "", "", "", "Ireland"})
			continue
		}
		r := &recs[rng.IntN(len(recs))]
		if k%25 == 3 {
			// PO Boxes are rare in the reference; make sure some appear.
			for tries := 0; r.Type != gazetteer.POBox && tries < 2000; tries++ {
				r = &recs[rng.IntN(len(recs))]
			}
		}
		c := p.Random(r)
		in := c.Input
		name := personName(rng)
		if r.Organisation != "" {
			name = r.Organisation
		}
		a1, a2 := "", ""
		switch {
		case len(in.Lines) == 0:
		case k%97 == 5 && len(in.Lines) >= 2:
			// A multi-line cell, as pasted from a letter.
			a1 = strings.Join(in.Lines, "\n")
		default:
			a1 = in.Lines[0]
			a2 = strings.Join(in.Lines[1:], ", ")
		}
		country := in.Country
		switch rng.IntN(8) {
		case 0:
			country = map[string]string{"Ireland": "IE", "United Kingdom": "UK"}[country]
		case 1:
			// A few rows with no country show what --country is for; more
			// would make the demo mostly errors.
			if k%10 == 0 {
				country = ""
			}
		case 2:
			if country == "Ireland" {
				country = "Éire"
			} else if r.Postcode != "" && strings.HasPrefix(r.Postcode, "BT") {
				country = "Northern Ireland"
			} else {
				country = "Great Britain"
			}
		}
		rows = append(rows, []string{next(), name, a1, a2, in.City, in.Region, in.Postcode, country})
	}
	return rows
}

func writeCustomers(dir string, recs []gazetteer.Record, n int) error {
	rows := customerRows(recs, n)
	err := writeFile(filepath.Join(dir, "customers.csv"), func(w *bufio.Writer) error {
		return csv.NewWriter(w).WriteAll(append([][]string{customerHeader}, rows...)) // WriteAll flushes
	})
	if err != nil {
		return fmt.Errorf("customers.csv: %w", err)
	}
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "Customers"
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return err
	}
	for i, row := range append([][]string{customerHeader}, rows...) {
		cell, err := excelize.CoordinatesToCellName(1, i+1)
		if err != nil {
			return err
		}
		if err := f.SetSheetRow(sheet, cell, &row); err != nil {
			return err
		}
	}
	err = writeFile(filepath.Join(dir, "customers.xlsx"), func(w *bufio.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
	if err != nil {
		return fmt.Errorf("customers.xlsx: %w", err)
	}
	return nil
}

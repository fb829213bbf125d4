// synthetic.go — a procedural multi-hop QA world: a corpus about fictional
// people, companies, cities and countries, and questions that need 1 to 3
// retrievals to answer, so search runs and learns offline.
//
// The world (all names made of random syllables, unique, seeded):
//
//	country                      "Qelandia\nQelandia is a country. Its capital is Brelmoor."
//	city     → country           "Brelmoor\nBrelmoor is a city in Qelandia."
//	company  → city              "Tandrix Works\nTandrix Works is a company headquartered in Brelmoor. It was founded in 1873."
//	person   → city, company     "Zorva Kelin\nZorva Kelin is a painter. Zorva Kelin was born in Brelmoor and works for Tandrix Works."
//
// Questions are about people (each person has one document):
//
//	1 hop  born in which city / which profession / works for which company   (the person's document)
//	2 hops born in which country (person → city), company's city (person → company)
//	3 hops country of the company's headquarters (person → company → city)
//
// Train and test ask about disjoint people (a seeded split), over one
// shared corpus. Task.Meta carries "hops" and "gold_doc" (the first
// document the answer chain needs).
//
// What it deliberately is not: natural. Its value is that answers cannot be
// known without searching, and that the hop count is controlled.
package search

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"troupe/retrieval"
	"troupe/rollout"
)

// SyntheticConfig sizes the world.
type SyntheticConfig struct {
	Seed         uint64  `yaml:"seed"`          // world seed (names, relations, split)
	People       int     `yaml:"people"`        // people in the world (questions are about them)
	Companies    int     `yaml:"companies"`     // companies
	Cities       int     `yaml:"cities"`        // cities
	Countries    int     `yaml:"countries"`     // countries
	MaxHops      int     `yaml:"max_hops"`      // 1, 2 or 3: the hardest questions asked
	TestFraction float64 `yaml:"test_fraction"` // share of the people kept for the test split
}

// DefaultSyntheticConfig is a small world: 300 documents.
func DefaultSyntheticConfig() SyntheticConfig {
	return SyntheticConfig{Seed: 1, People: 240, Companies: 30, Cities: 24, Countries: 6, MaxHops: 2, TestFraction: 0.2}
}

// Validate checks ranges; errors name the key and the fix.
func (c SyntheticConfig) Validate() error {
	switch {
	case c.People < 5:
		return fmt.Errorf("env.search.synthetic.people: must be >= 5, got %d", c.People)
	case c.Companies < 1 || c.Cities < 1 || c.Countries < 1:
		return fmt.Errorf("env.search.synthetic: companies, cities and countries must each be >= 1, got %d, %d, %d", c.Companies, c.Cities, c.Countries)
	case c.Cities < c.Countries:
		return fmt.Errorf("env.search.synthetic.cities: must be >= countries (%d) so every country has a capital, got %d", c.Countries, c.Cities)
	case c.MaxHops < 1 || c.MaxHops > 3:
		return fmt.Errorf("env.search.synthetic.max_hops: must be 1, 2 or 3, got %d", c.MaxHops)
	case !(c.TestFraction > 0 && c.TestFraction < 1):
		return fmt.Errorf("env.search.synthetic.test_fraction: must be in (0, 1), got %g", c.TestFraction)
	}
	return nil
}

// World is a generated corpus with its train and test questions.
type World struct {
	Corpus      []retrieval.Document
	Train, Test rollout.SliceSource
}

var (
	onsets      = []string{"b", "br", "d", "dr", "f", "g", "k", "kr", "l", "m", "n", "p", "qu", "r", "s", "st", "t", "th", "v", "z"}
	nuclei      = []string{"a", "e", "i", "o", "u", "ae", "ei", "ou"}
	codas       = []string{"", "", "n", "r", "l", "s", "th", "m", "x"}
	professions = []string{"painter", "surgeon", "architect", "sailor", "baker", "astronomer", "lawyer", "weaver", "composer", "botanist", "engineer", "poet"}
	companyEnds = []string{"Works", "Foundry", "Mills", "Trading", "Holdings", "Press", "Shipyards", "Labs"}
	countryEnds = []string{"ia", "land", "or", "ica", "ara"}
	cityEnds    = []string{"moor", "ford", "haven", "grad", "mouth", "stead", "port"}
)

type namer struct {
	r    *rollout.Rand
	used map[string]bool
}

func (n *namer) word(syllables int, suffix string) string {
	for {
		var b strings.Builder
		for i := 0; i < syllables; i++ {
			b.WriteString(onsets[n.r.IntN(len(onsets))])
			b.WriteString(nuclei[n.r.IntN(len(nuclei))])
			b.WriteString(codas[n.r.IntN(len(codas))])
		}
		b.WriteString(suffix)
		w := b.String()
		w = strings.ToUpper(w[:1]) + w[1:]
		if !n.used[strings.ToLower(w)] {
			n.used[strings.ToLower(w)] = true
			return w
		}
	}
}

// NewWorld generates the world of cfg.
func NewWorld(cfg SyntheticConfig) (*World, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := rollout.NewRand(rollout.DeriveSeed(cfg.Seed, 0x5ea7c4))
	nm := &namer{r: r, used: map[string]bool{}}
	w := &World{}
	add := func(kind string, i int, title, text string) string {
		id := fmt.Sprintf("%s-%d", kind, i)
		w.Corpus = append(w.Corpus, retrieval.Document{ID: id, Contents: title + "\n" + text})
		return id
	}

	countries := make([]string, cfg.Countries)
	for i := range countries {
		countries[i] = nm.word(2, countryEnds[r.IntN(len(countryEnds))])
	}
	cities := make([]string, cfg.Cities)
	cityCountry := make([]int, cfg.Cities)
	for i := range cities {
		cities[i] = nm.word(1+r.IntN(2), cityEnds[r.IntN(len(cityEnds))])
		cityCountry[i] = i % cfg.Countries // the first city of each country is its capital
		if i >= cfg.Countries {
			cityCountry[i] = r.IntN(cfg.Countries)
		}
	}
	for i, c := range countries {
		add("country", i, c, fmt.Sprintf("%s is a country. Its capital is %s.", c, cities[i]))
	}
	for i, c := range cities {
		add("city", i, c, fmt.Sprintf("%s is a city in %s.", c, countries[cityCountry[i]]))
	}
	companies := make([]string, cfg.Companies)
	companyCity := make([]int, cfg.Companies)
	for i := range companies {
		companies[i] = nm.word(2, "") + " " + companyEnds[r.IntN(len(companyEnds))]
		companyCity[i] = r.IntN(cfg.Cities)
		add("company", i, companies[i], fmt.Sprintf("%s is a company headquartered in %s. It was founded in %d.", companies[i], cities[companyCity[i]], 1700+r.IntN(300)))
	}

	test := map[int]bool{}
	perm := r.Perm(cfg.People)
	nTest := max(1, int(float64(cfg.People)*cfg.TestFraction+0.5))
	for _, p := range perm[:nTest] {
		test[p] = true
	}
	for i := 0; i < cfg.People; i++ {
		name := nm.word(2, "") + " " + nm.word(2, "")
		prof := professions[r.IntN(len(professions))]
		born, works := r.IntN(cfg.Cities), r.IntN(cfg.Companies)
		doc := add("person", i, name, fmt.Sprintf("%s is a %s. %s was born in %s and works for %s.", name, prof, name, cities[born], companies[works]))
		city, company := cities[born], companies[works]
		hq := cities[companyCity[works]]
		otherCity := cities[(born+1+r.IntN(max(cfg.Cities-1, 1)))%cfg.Cities]
		otherCountry := countries[(cityCountry[born]+1)%cfg.Countries]
		qs := []struct {
			hops     int
			question string
			answer   string
			chain    []string // the titles to look up, in order
			mistake  string   // a plausible wrong answer (for demonstrations)
		}{
			{1, fmt.Sprintf("In which city was %s born?", name), city, []string{name}, otherCity},
			{1, fmt.Sprintf("What is the profession of %s?", name), prof, []string{name}, professions[(slices.Index(professions, prof)+1)%len(professions)]},
			{1, fmt.Sprintf("Which company does %s work for?", name), company, []string{name}, companies[(works+1)%cfg.Companies]},
			{2, fmt.Sprintf("In which country was %s born?", name), countries[cityCountry[born]], []string{name, city}, otherCountry},
			{2, fmt.Sprintf("In which city is the company that %s works for headquartered?", name), hq, []string{name, company}, city},
			{3, fmt.Sprintf("In which country is the company that %s works for headquartered?", name), countries[cityCountry[companyCity[works]]], []string{name, company, hq}, countries[(cityCountry[companyCity[works]]+1)%cfg.Countries]},
		}
		for j, q := range qs {
			if q.hops > cfg.MaxHops {
				continue
			}
			t := rollout.Task{
				ID:       fmt.Sprintf("synthetic-%d-%d", i, j),
				Question: q.question,
				Answer:   q.answer,
				Meta: map[string]string{"hops": strconv.Itoa(q.hops), "gold_doc": doc, "data_source": "synthetic",
					"chain": strings.Join(q.chain, "|"), "mistake": q.mistake},
			}
			if test[i] {
				w.Test = append(w.Test, t)
			} else {
				w.Train = append(w.Train, t)
			}
		}
	}
	return w, nil
}

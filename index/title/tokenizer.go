package title

import (
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// tokenizerName names the tokenizer of the title analyzer in bleve's registry (where bleve's
// own tokenizers register themselves on init, and an index mapping names the one it uses).
const tokenizerName = "gatehouse_words"

func init() {
	err := registry.RegisterTokenizer(tokenizerName, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return wordsTokenizer{}, nil
	})
	if err != nil {
		panic(err)
	}
}

// wordsTokenizer is bleve's whitespace tokenizer (character.CharacterTokenizer splitting at
// unicode.IsSpace: the same tokens, ending at the first invalid UTF-8 sequence as it does),
// sized to its input. Bleve's starts every stream at room for 1,024 tokens: 8 KB allocated and
// zeroed per title of two words, which made that tokenizer the origin of a sixth of all the
// bytes the server allocated under record creates.
type wordsTokenizer struct{}

// Tokenize splits input at white space.
func (wordsTokenizer) Tokenize(input []byte) analysis.TokenStream {
	var room [8][2]int
	spans := room[:0]
	start, end := 0, 0
	for offset := 0; ; {
		r, size := utf8.DecodeRune(input[offset:])
		if r == utf8.RuneError {
			break
		}
		if !unicode.IsSpace(r) {
			end = offset + size
		} else {
			if end > start {
				spans = append(spans, [2]int{start, end})
			}
			start, end = offset+size, offset+size
		}
		offset += size
	}
	if end > start {
		spans = append(spans, [2]int{start, end})
	}
	toks := make([]analysis.Token, len(spans))
	rv := make(analysis.TokenStream, len(spans))
	for i, s := range spans {
		toks[i] = analysis.Token{Term: input[s[0]:s[1]], Start: s[0], End: s[1], Position: i + 1, Type: analysis.AlphaNumeric}
		rv[i] = &toks[i]
	}
	return rv
}

package intents

// Card brands, by the number's prefix ranges (the networks' published
// IIN ranges; no external data). A number of no known range is
// BrandUnknown.
const (
	BrandVisa       = "visa"
	BrandMastercard = "mastercard"
	BrandAmex       = "amex"
	BrandDiscover   = "discover"
	BrandJCB        = "jcb"
	BrandDiners     = "diners"
	BrandUnionPay   = "unionpay"
	BrandMaestro    = "maestro"
	BrandMir        = "mir"
	BrandElo        = "elo"
	BrandUnknown    = "unknown"
)

// brandRange is the numbers whose first len(lo) digits are within
// [lo, hi] (lo and hi of one length).
type brandRange struct {
	lo, hi, brand string
}

// brandRanges are checked in order: narrower ranges that sit inside a
// wider one of another brand come first (Discover's co-branded 622126 to
// 622925 inside UnionPay's 62, Elo's inside Visa's 4 and Discover's 65).
var brandRanges = []brandRange{
	{"401178", "401179", BrandElo}, {"431274", "431274", BrandElo}, {"438935", "438935", BrandElo},
	{"451416", "451416", BrandElo}, {"457393", "457393", BrandElo}, {"457631", "457632", BrandElo},
	{"504175", "504175", BrandElo}, {"506699", "506778", BrandElo}, {"509000", "509999", BrandElo},
	{"627780", "627780", BrandElo}, {"636297", "636297", BrandElo}, {"636368", "636368", BrandElo},
	{"650031", "650033", BrandElo}, {"650035", "650051", BrandElo}, {"650405", "650439", BrandElo},
	{"650485", "650538", BrandElo}, {"650541", "650598", BrandElo}, {"650700", "650718", BrandElo},
	{"650720", "650727", BrandElo}, {"650901", "650978", BrandElo}, {"651652", "651679", BrandElo},
	{"655000", "655019", BrandElo}, {"655021", "655058", BrandElo},
	{"622126", "622925", BrandDiscover},
	{"2200", "2204", BrandMir},
	{"2221", "2720", BrandMastercard},
	{"300", "305", BrandDiners}, {"3095", "3095", BrandDiners}, {"36", "36", BrandDiners}, {"38", "39", BrandDiners},
	{"34", "34", BrandAmex}, {"37", "37", BrandAmex},
	{"3528", "3589", BrandJCB},
	{"4", "4", BrandVisa},
	{"51", "55", BrandMastercard},
	{"5018", "5018", BrandMaestro}, {"5020", "5020", BrandMaestro}, {"5038", "5038", BrandMaestro},
	{"5893", "5893", BrandMaestro}, {"6304", "6304", BrandMaestro}, {"6759", "6759", BrandMaestro},
	{"6761", "6763", BrandMaestro},
	{"6011", "6011", BrandDiscover}, {"644", "649", BrandDiscover}, {"65", "65", BrandDiscover},
	{"62", "62", BrandUnionPay}, {"81", "81", BrandUnionPay},
}

// CardBrand names the network of a card number (digits only) by its
// prefix: one of the Brand constants.
func CardBrand(number string) string {
	for _, r := range brandRanges {
		if len(number) < len(r.lo) {
			continue
		}
		if p := number[:len(r.lo)]; p >= r.lo && p <= r.hi {
			return r.brand
		}
	}
	return BrandUnknown
}

// cardBIN is the BIN PCI DSS allows to be displayed: the first 6 digits,
// or 8 for a number of 16 digits or more.
func cardBIN(number string) string {
	if len(number) >= 16 {
		return number[:8]
	}
	return number[:min(6, len(number))]
}

// cardDetails summarises a validated card: what an Intent shows of it.
func cardDetails(number string, month, year int) *CardDetails {
	last4 := number[max(0, len(number)-4):]
	return &CardDetails{Bin: cardBIN(number), Last4: last4, ExpirationMonth: month, ExpirationYear: year,
		Brand: CardBrand(number)}
}

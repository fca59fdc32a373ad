/** ISO 4217 currencies (lowercase, as on the wire) and the 249 assigned ISO 3166-1 alpha-2 countries (uppercase). */

const currencies = "aed afn all amd aoa ars aud awg azn bam bbd bdt bhd bif bmd bnd bob bov brl bsd btn bwp byn bzd " +
  "cad cdf che chf chw clf clp cny cop cou crc cup cve czk djf dkk dop dzd egp ern etb eur fjd fkp " +
  "gbp gel ghs gip gmd gnf gtq gyd hkd hnl htg huf idr ils inr iqd irr isk jmd jod jpy kes kgs khr " +
  "kmf kpw krw kwd kyd kzt lak lbp lkr lrd lsl lyd mad mdl mga mkd mmk mnt mop mru mur mvr mwk mxn " +
  "mxv myr mzn nad ngn nio nok npr nzd omr pab pen pgk php pkr pln pyg qar ron rsd rub rwf sar sbd " +
  "scr sdg sek sgd shp sle sos srd ssp stn svc syp szl thb tjs tmt tnd top try ttd twd tzs uah ugx " +
  "usd usn uyi uyu uyw uzs ved ves vnd vuv wst xaf xag xau xba xbb xbc xbd xcd xcg xdr xof xpd xpf " +
  "xpt xsu xts xua xxx yer zar zmw zwg"

/** Withdrawn but still accepted during their transition (`ang` → `xcg`, `bgn` → `eur`, `cuc`, `sll` → `sle`). */
const transitionalCurrencies = "ang bgn cuc sll"

const countries = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ " +
  "BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
  "CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
  "DE DJ DK DM DO DZ " +
  "EC EE EG EH ER ES ET " +
  "FI FJ FK FM FO FR " +
  "GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY " +
  "HK HM HN HR HT HU " +
  "ID IE IL IM IN IO IQ IR IS IT " +
  "JE JM JO JP " +
  "KE KG KH KI KM KN KP KR KW KY KZ " +
  "LA LB LC LI LK LR LS LT LU LV LY " +
  "MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
  "NA NC NE NF NG NI NL NO NP NR NU NZ " +
  "OM " +
  "PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
  "QA " +
  "RE RO RS RU RW " +
  "SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ " +
  "TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
  "UA UG UM US UY UZ " +
  "VA VC VE VG VI VN VU " +
  "WF WS " +
  "YE YT " +
  "ZA ZM ZW"

const words = (s: string): ReadonlyArray<string> => s.split(/\s+/).filter((w) => w.length > 0)

export const ISO_4217_CURRENCIES: ReadonlySet<string> = new Set([
  ...words(currencies),
  ...words(transitionalCurrencies)
])

export const ISO_3166_COUNTRIES: ReadonlySet<string> = new Set(words(countries))

export const isCurrency = (code: string): boolean => ISO_4217_CURRENCIES.has(code)

export const isCountry = (code: string): boolean => ISO_3166_COUNTRIES.has(code)

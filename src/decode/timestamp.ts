// Which JSON strings are timestamps, and the instant they name. A string counts as a timestamp
// (Iceberg timestamptz) only when it names one instant without context, i.e. RFC 3339 with an
// explicit offset:
//
//   YYYY-MM-DD(T|t| )hh:mm:ss[.f{1,9}](Z|z|±hh:mm|±hhmm|±hh)
//
// `2026-10-29T15:22:04+00:00`, `...04Z`, `...04.123456Z`, `2026-10-29 15:22:04+05:30` and
// PostgreSQL's `...04+00` are timestamps. A string without an offset (`2026-10-29T15:22:04`)
// is local time in an unknown zone, a date alone is not an instant, and a leap second (`:60`)
// has no microsecond of its own: all three stay strings. Digits below the microsecond are
// truncated (toward the past), because timestamptz holds microseconds.
//
// The parser reads char codes in place: it runs for every string value during inference and
// for every value of a timestamptz column during conversion, and most strings fail at the
// length test or at the first '-'.

const MIN_LENGTH = 20; // 2026-10-29T15:22:04Z
const MAX_LENGTH = 35; // 2026-10-29T15:22:04.123456789+05:30
const DIGIT_0 = 48;
const MICROS_PER_SECOND = 1_000_000;
/** Seconds beyond which seconds * 1e6 + micros leaves the safe-integer range (years ~1685..2255). */
const SAFE_SECONDS = 9_000_000_000;

/**
 * Microseconds since 1970-01-01T00:00:00Z of a timestamp string, or undefined when `text` is
 * not one. A number when it is a safe integer (every instant between the years 1685 and 2255),
 * a bigint otherwise: the column builders take both, and most rows need no BigInt.
 */
export function timestampMicros(text: string): number | bigint | undefined {
  const length = text.length;
  if (length < MIN_LENGTH || length > MAX_LENGTH) return undefined;
  if (text.charCodeAt(4) !== 45 /* - */ || text.charCodeAt(7) !== 45 || text.charCodeAt(13) !== 58 /* : */) {
    return undefined;
  }
  if (text.charCodeAt(16) !== 58) return undefined;
  const separator = text.charCodeAt(10);
  if (separator !== 84 /* T */ && separator !== 116 /* t */ && separator !== 32 /* space */) return undefined;

  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  // digits() gives -1 for a non-digit, so every range test below also rejects those.
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;

  let i = 19;
  let micros = 0;
  if (text.charCodeAt(i) === 46 /* . */) {
    const start = ++i;
    while (i < length) {
      const d = text.charCodeAt(i) - DIGIT_0;
      if (d < 0 || d > 9) break;
      if (i - start < 6) micros = micros * 10 + d;
      i++;
    }
    const count = i - start;
    if (count === 0 || count > 9) return undefined;
    for (let k = count; k < 6; k++) micros *= 10;
  }

  const offsetSeconds = offset(text, i);
  if (offsetSeconds === undefined) return undefined;
  const seconds = daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds;
  if (seconds > -SAFE_SECONDS && seconds < SAFE_SECONDS) return seconds * MICROS_PER_SECOND + micros;
  return BigInt(seconds) * BigInt(MICROS_PER_SECOND) + BigInt(micros);
}

/** The zone offset starting at `i`, in seconds east of UTC; it must run to the end of the text. */
function offset(text: string, i: number): number | undefined {
  const sign = text.charCodeAt(i);
  const rest = text.length - i;
  if (sign === 90 /* Z */ || sign === 122 /* z */) return rest === 1 ? 0 : undefined;
  if (sign !== 43 /* + */ && sign !== 45 /* - */) return undefined;
  let hours: number;
  let minutes = 0;
  if (rest === 3) {
    hours = digits(text, i + 1, 2);
  } else if (rest === 5) {
    hours = digits(text, i + 1, 2);
    minutes = digits(text, i + 3, 2);
  } else if (rest === 6 && text.charCodeAt(i + 3) === 58) {
    hours = digits(text, i + 1, 2);
    minutes = digits(text, i + 4, 2);
  } else {
    return undefined;
  }
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return undefined;
  const seconds = hours * 3600 + minutes * 60;
  return sign === 45 ? -seconds : seconds;
}

/** The decimal number of `count` digits at `start`, or -1 when one of them is not a digit. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const d = text.charCodeAt(i) - DIGIT_0;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "days_from_civil"). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

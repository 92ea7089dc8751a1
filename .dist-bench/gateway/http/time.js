/**
 * Time values on the wire. Accepted in queries: a relative offset from now (`-90s`, `-30m`, `-1h`,
 * `-7d`), Unix seconds (`0` included), RFC 3339 (`2024-05-01T12:00:00Z`, fractions and offsets
 * allowed) or a UTC date `yyyy-mm-dd`. Written as RFC 3339 UTC with whole seconds.
 */
/** Latest representable time: 9999-12-31T23:59:59Z, in Unix seconds. */
export const MAX_TIME_SECONDS = 253_402_300_799;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 };
const RELATIVE = /^-([0-9]{1,12})([smhd])$/;
const UNIX = /^[0-9]{1,15}$/;
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
const DATE_TIME = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))$/;
/** Seconds since the epoch of a UTC calendar time, or NaN when a field is out of range. */
function utcSeconds(y, mo, d, h, mi, s) {
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59)
        return NaN;
    const ms = Date.UTC(y, mo - 1, d, h, mi, s);
    const check = new Date(ms);
    if (check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d)
        return NaN;
    return ms / 1000;
}
/** Parses one of the accepted forms, or returns null. Range is checked when resolved. */
export function parseTimeSpec(text) {
    let m = RELATIVE.exec(text);
    if (m !== null)
        return { relative: true, offsetSeconds: -Number(m[1]) * UNIT_SECONDS[m[2]] };
    if (UNIX.test(text))
        return { relative: false, seconds: Number(text) };
    m = DATE.exec(text);
    if (m !== null) {
        const t = utcSeconds(Number(m[1]), Number(m[2]), Number(m[3]), 0, 0, 0);
        return Number.isNaN(t) ? null : { relative: false, seconds: t };
    }
    m = DATE_TIME.exec(text);
    if (m !== null) {
        let t = utcSeconds(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
        if (Number.isNaN(t))
            return null;
        if (m[8] === undefined) {
            const oh = Number(m[10]);
            const om = Number(m[11]);
            if (oh > 23 || om > 59)
                return null;
            t -= (m[9] === '+' ? 1 : -1) * (oh * 3600 + om * 60);
        }
        return { relative: false, seconds: t };
    }
    return null;
}
/** Unix seconds of `spec` at `nowSeconds`, or NaN when outside [0, MAX_TIME_SECONDS]. */
export function resolveTime(spec, nowSeconds) {
    const t = spec.relative ? Math.floor(nowSeconds) + spec.offsetSeconds : spec.seconds;
    return t >= 0 && t <= MAX_TIME_SECONDS ? t : NaN;
}
const PAD2 = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));
/** RFC 3339 UTC with whole seconds (`2024-05-01T12:00:00Z`) of Unix seconds in [0, MAX_TIME_SECONDS]. */
export function rfc3339(unixSeconds) {
    const s = Math.floor(unixSeconds);
    const days = Math.floor(s / 86_400);
    let rem = s - days * 86_400;
    // Civil date from days since the epoch (H. Hinnant's algorithm, proleptic Gregorian).
    const z = days + 719_468;
    const era = Math.floor(z / 146_097);
    const doe = z - era * 146_097;
    const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
    const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
    const mp = Math.floor((5 * doy + 2) / 153);
    const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
    const m = mp < 10 ? mp + 3 : mp - 9;
    const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
    const hh = Math.floor(rem / 3600);
    rem -= hh * 3600;
    const mm = Math.floor(rem / 60);
    return `${y}-${PAD2[m]}-${PAD2[d]}T${PAD2[hh]}:${PAD2[mm]}:${PAD2[rem - mm * 60]}Z`;
}
//# sourceMappingURL=time.js.map
const ONSETS = ['b', 'br', 'c', 'ch', 'd', 'dr', 'f', 'g', 'gl', 'h', 'j', 'k', 'kr', 'l', 'm', 'n', 'p', 'pl', 'qu', 'r', 's', 'sk', 'st', 't', 'tr', 'v', 'w', 'z', 'x', 'y'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'a', 'o', 'ai', 'ea', 'io', 'y'];
const CODAS = ['', '', '', 'n', 'r', 'x', 'k', 'l', 'm', 's', 'th', 'z', 'ck', 'nd', 'rk'];
const SUFFIXES = ['', '', '', '', '', ' Token', ' Protocol', ' Finance', ' Network', ' Inu', ' Chain', ' Coin', ' Labs', ' DAO', ' Swap', ' Cat', ' Dog', ' Moon'];
const CONSONANT = /[bcdfghjklmnpqrstvwxz]/;
function syllable(rng) {
    return ONSETS[rng.nextInt(ONSETS.length)] + VOWELS[rng.nextInt(VOWELS.length)] + CODAS[rng.nextInt(CODAS.length)];
}
/** A name like "Zorvex Finance" with a 3-5 letter symbol like "ZRVX". */
export function tokenName(rng) {
    const syllables = 2 + (rng.nextFloat() < 0.3 ? 1 : 0);
    let root = '';
    for (let i = 0; i < syllables; i++)
        root += syllable(rng);
    root = root.slice(0, 10);
    const name = root[0].toUpperCase() + root.slice(1) + SUFFIXES[rng.nextInt(SUFFIXES.length)];
    const length = 3 + rng.nextInt(3);
    // First letter, then consonants, then whatever letters remain: reads like a real ticker.
    let symbol = root[0];
    for (let i = 1; i < root.length && symbol.length < length; i++)
        if (CONSONANT.test(root[i]))
            symbol += root[i];
    for (let i = 1; i < root.length && symbol.length < length; i++)
        if (!CONSONANT.test(root[i]))
            symbol += root[i];
    while (symbol.length < 3)
        symbol += 'X';
    return { name, symbol: symbol.toUpperCase() };
}
//# sourceMappingURL=names.js.map
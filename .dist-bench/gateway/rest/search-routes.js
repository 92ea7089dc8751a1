import { createGlobalSearch } from './global-search.js';
import { createTokenSearch } from './token-search.js';
import { segment } from '../http/path.js';
export function createSearchRoutes(ctx, statics) {
    const tokens = createTokenSearch(ctx);
    const search = createGlobalSearch(ctx, statics);
    return (s, query) => {
        if (s.length === 2 && s[1] === 'search')
            return search(query);
        if (s.length === 3 && s[1] === 'tokens' && s[2] === 'search')
            return tokens.global(query);
        if (s.length === 5 && s[1] === 'networks' && s[3] === 'tokens' && s[4] === 'search')
            return tokens.network(segment(s[2], 'network'), query);
        return null;
    };
}
//# sourceMappingURL=search-routes.js.map
export {};
//# sourceMappingURL=ranker.js.map
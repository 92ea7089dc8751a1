export {};
//# sourceMappingURL=route.js.map
// Command mapgen writes the land of the report's map (report/land.txt)
// from world-atlas's countries-10m.json: the countries that lie in Europe's
// box (Ireland and Great Britain and their neighbours, and the rest of
// western Europe for context), simplified, at a detail fit for a map of one
// city for the islands of Ireland and Great Britain and fit for a country
// map elsewhere. It runs at 'go generate' time only; the build embeds its
// output and needs neither node nor the network.
//
// The data: Natural Earth 1:10m Admin 0 countries (public domain), as the
// npm package world-atlas 2.0.2 carries it (TopoJSON; the package is ISC,
// (c) Michael Bostock). Fetch it with
//
//	npm pack world-atlas@2.0.2 && tar xzf world-atlas-2.0.2.tgz
//
// and run 'WORLD_ATLAS=$PWD/package go generate ./report'.
package main

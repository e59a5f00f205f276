// Package runner measures a scenario: it builds the topology, runs the rounds with the states
// in the scenario's order, drives the tools in the namespaces, journals every sample, and
// tears everything down on every exit path.
package runner

import (
	"math/rand"

	"github.com/nsperf/nsperf/scenarios"
)

// Schedule returns, for each round, the order in which the states are measured:
//   - alternate: A B, A B, ... (every state once per round, in scenario order);
//   - abba: A B, B A, A B, ...: the reversal cancels a linear drift between the states;
//   - random: a permutation per round from a generator seeded with seed (reproducible).
func Schedule(states []string, runs int, order string, seed int64) [][]string {
	rng := rand.New(rand.NewSource(seed))
	rounds := make([][]string, runs)
	for r := range rounds {
		round := append([]string(nil), states...)
		switch order {
		case scenarios.OrderABBA:
			if r%2 == 1 {
				for i, j := 0, len(round)-1; i < j; i, j = i+1, j-1 {
					round[i], round[j] = round[j], round[i]
				}
			}
		case scenarios.OrderRandom:
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		rounds[r] = round
	}
	return rounds
}

package model

// limits.go — what a request must fit in a model: a prompt and its
// response together within the positions the model was trained for
// (max_position_embeddings). Beyond them the rotary positions are ones the
// model never saw, and a request for millions of new tokens would run until
// it was killed; callers check before generating and name their own flag.

import "fmt"

// FitLength checks that a prompt of prompt tokens and up to maxNew
// generated tokens fit in the model's positions.
func (c Config) FitLength(prompt, maxNew int) error {
	switch {
	case maxNew < 1:
		return fmt.Errorf("new tokens must be >= 1, got %d", maxNew)
	case c.MaxPositions > 0 && prompt >= c.MaxPositions:
		return fmt.Errorf("the prompt is %d tokens, the model has %d positions (max_position_embeddings); shorten the prompt", prompt, c.MaxPositions)
	case c.MaxPositions > 0 && maxNew > c.MaxPositions-prompt:
		return fmt.Errorf("%d new tokens after a %d-token prompt need %d positions, the model has %d (max_position_embeddings); ask for at most %d", maxNew, prompt, prompt+maxNew, c.MaxPositions, c.MaxPositions-prompt)
	}
	return nil
}

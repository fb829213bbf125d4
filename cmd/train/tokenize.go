package main

// tokenize.go — `train tokenize`: ids and tokens of a text, or of a chat
// rendered with the tokenizer's template, for debugging prompts.

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"troupe/tokenizer"
)

type tokenizeCmd struct {
	tokenizer string
	chat      bool
	system    string
	noThink   bool
	template  string
}

func newTokenize() *cobra.Command {
	c := &tokenizeCmd{}
	cmd := &cobra.Command{
		Use:   "tokenize --tokenizer DIR [--chat [--system TEXT]] TEXT...",
		Short: "Print the token ids and tokens of a text or of a chat rendered with the template",
		Args:  cobra.MinimumNArgs(1),
		RunE:  c.run,
	}
	f := cmd.Flags()
	f.StringVar(&c.tokenizer, "tokenizer", "", "tokenizer.json or a directory holding it (required)")
	f.BoolVar(&c.chat, "chat", false, "render TEXT as the user message of a chat, with the generation prompt")
	f.StringVar(&c.system, "system", "", "system message (with --chat)")
	f.BoolVar(&c.noThink, "no-think", false, "Qwen3 enable_thinking=false (with --chat)")
	f.StringVar(&c.template, "template", "auto", "chat template family: auto, qwen2.5 or qwen3")
	cmd.MarkFlagRequired("tokenizer")
	return cmd
}

func (c *tokenizeCmd) run(cmd *cobra.Command, args []string) error {
	tok, err := tokenizer.Load(c.tokenizer)
	if err != nil {
		return err
	}
	text := strings.Join(args, " ")
	if c.chat {
		tmpl, err := tokenizer.ParseChatTemplate(c.template)
		if err != nil {
			return fmt.Errorf("tokenize: --template: %w", err)
		}
		if tmpl != tokenizer.ChatTemplateAuto {
			if err := tok.CheckTemplate(tmpl); err != nil {
				return fmt.Errorf("tokenize: --template %s: %w", c.template, err)
			}
		}
		var msgs []tokenizer.Message
		if c.system != "" {
			msgs = append(msgs, tokenizer.Message{Role: "system", Content: c.system})
		}
		msgs = append(msgs, tokenizer.Message{Role: "user", Content: text})
		text, err = tok.ApplyChatTemplate(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true, DisableThinking: c.noThink, Template: tmpl})
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "rendered:\n%s\n\n", text)
	}
	return tokenizer.WriteTokenTable(cmd.OutOrStdout(), tok.Describe(tok.Encode(text)))
}

#!/usr/bin/env python3
"""rl_reference.py IN.json — TRL's and verl's GRPO advantages, clipped
policy losses and KL estimators, computed by their own code on the inputs a
Go test wrote, printed as one JSON object. Run with the Python reference
environment (scripts/pyref/python); troupe's side of the comparison is
advantage's TestGRPOMatchesVerlAndTRL and policy's TestLossMatchesVerlAndTRL.

Nothing here re-implements a formula: every number comes from a call into
verl or TRL.

  verl (verl.trainer.ppo.core_algos):
    compute_grpo_outcome_advantage      norm_adv_by_std_in_grpo True (GRPO)
                                        and False (Dr. GRPO), any group sizes
    compute_policy_loss_vanilla         the dual-clip PPO loss, aggregated by
                                        agg_loss in each loss_agg_mode
    kl_penalty                          k1 and low_var_kl (k3)
  TRL (trl.GRPOTrainer, built on a tiny random model on the CPU):
    _generate_and_score_completions     the advantages of fixed rewards (the
                                        reward function returns them in
                                        order; the completions are sampled
                                        but only their count matters), with
                                        scale_rewards "group" and "none"
    _compute_loss                       the loss of each loss_type, with
                                        _get_per_token_logps_and_entropies
                                        replaced on the instance by one that
                                        returns the given log-probs

IN.json (either part may be left out):
  {"advantages": {"rewards": [...], "groups": [...], "epsilon": e,
                  "trl_rewards": [...], "num_generations": G},
   "losses": [{"logp": [[...]], "old": [[...]], "ref": [[...]], "adv": [...],
               "mask": [[...]], "clip_low": l, "clip_high": h,
               "dual_clip": c, "length": L}, ...]}
  (trl_rewards: G consecutive completions per prompt, as TRL orders them;
  every loss case shares clip_low, clip_high and length.)

Output:
  {"versions": {...},
   "advantages": {"verl_grpo": [...], "verl_drgrpo": [...],
                  "trl_group": [...], "trl_none": [...]},
   "losses": [{"verl": {mode: {"loss": x, "grad": [[...]]}},
               "trl": {loss_type: {"loss": x, "grad": [[...]]}},
               "verl_kl": {"k1": [[...]], "low_var_kl": [[...]]}}, ...]}
grad is d loss / d logp.
"""
import json
import sys
import tempfile

import numpy as np
import torch

VERL_MODES = ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "seq-mean-token-sum-norm"]
TRL_LOSS_TYPES = ["grpo", "bnpo", "dr_grpo", "dapo", "luspo"]


def verl_advantages(case):
    from verl.trainer.ppo import core_algos

    scores = torch.tensor(case["rewards"], dtype=torch.float64)
    B, T = len(scores), 4
    token_rewards = torch.zeros(B, T, dtype=torch.float64)
    token_rewards[:, -1] = scores  # an outcome reward sits on the last response token
    mask = torch.ones(B, T, dtype=torch.float64)
    index = np.array(case["groups"])
    out = {}
    for name, norm in (("verl_grpo", True), ("verl_drgrpo", False)):
        adv, _ = core_algos.compute_grpo_outcome_advantage(token_rewards, mask, index, epsilon=case["epsilon"],
                                                           norm_adv_by_std_in_grpo=norm)
        out[name] = adv[:, 0].tolist()
    return out


def verl_losses(case):
    from verl.trainer.ppo import core_algos
    from verl.workers.config import ActorConfig

    out, kl = {}, {}
    for mode in VERL_MODES:
        config = ActorConfig(strategy="fsdp", rollout_n=1, ppo_mini_batch_size=1, ppo_micro_batch_size_per_gpu=1,
                             clip_ratio=case["clip_low"], clip_ratio_low=case["clip_low"],
                             clip_ratio_high=case["clip_high"], clip_ratio_c=case["dual_clip"], loss_agg_mode=mode,
                             loss_scale_factor=case["length"])
        config.global_batch_info["loss_scale_factor"] = case["length"]
        logp = torch.tensor(case["logp"], dtype=torch.float64, requires_grad=True)
        old = torch.tensor(case["old"], dtype=torch.float64)
        mask = torch.tensor(case["mask"], dtype=torch.float64)
        adv = torch.tensor(case["adv"], dtype=torch.float64)[:, None].expand_as(mask)
        loss, _ = core_algos.compute_policy_loss_vanilla(old, logp, adv, mask, loss_agg_mode=mode, config=config)
        loss.backward()
        out[mode] = {"loss": loss.item(), "grad": logp.grad.tolist()}
    logp = torch.tensor(case["logp"], dtype=torch.float64)
    ref = torch.tensor(case["ref"], dtype=torch.float64)
    for estimator in ("k1", "low_var_kl"):
        kl[estimator] = core_algos.kl_penalty(logp, ref, estimator).tolist()
    return out, kl


class TRL:
    """A GRPOTrainer on a tiny random Qwen2 and a character tokenizer, built
    in memory: nothing is downloaded."""

    def __init__(self, num_generations, clip_low, clip_high, length):
        import transformers
        from datasets import Dataset
        from tokenizers import Tokenizer, models
        from trl import GRPOConfig, GRPOTrainer

        vocab = {chr(ord("a") + i): i for i in range(26)}
        vocab.update({"<pad>": 26, "<eos>": 27})
        tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE(vocab=vocab, merges=[])),
                                                         pad_token="<pad>", eos_token="<eos>")
        config = transformers.Qwen2Config(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                          num_attention_heads=2, num_key_value_heads=1, pad_token_id=26,
                                          bos_token_id=None, eos_token_id=None)
        torch.manual_seed(0)
        model = transformers.AutoModelForCausalLM.from_config(config)
        self.rewards = []
        args = GRPOConfig(output_dir=tempfile.mkdtemp(), use_cpu=True, report_to="none", seed=0,
                          num_generations=num_generations, per_device_train_batch_size=num_generations,
                          max_completion_length=length, beta=0.0, epsilon=clip_low, epsilon_high=clip_high)
        self.trainer = GRPOTrainer(model=model, reward_funcs=self.reward, args=args, processing_class=tokenizer,
                                   train_dataset=Dataset.from_dict({"prompt": ["abc"]}))
        self.trainer.model.train()
        self.trainer.current_gradient_accumulation_steps = 1  # set by the training loop, which does not run here
        self.G = num_generations

    def reward(self, completions, **kwargs):
        if len(completions) != len(self.rewards):
            raise ValueError(f"TRL asked for {len(completions)} rewards, the input has {len(self.rewards)}")
        return list(self.rewards)

    def advantages(self, rewards, scale):
        self.rewards = rewards
        self.trainer.scale_rewards = scale
        prompts = [{"prompt": "ab" + chr(ord("c") + i // self.G)} for i in range(len(rewards))]
        out = self.trainer._generate_and_score_completions(prompts)
        return out["advantages"].tolist()

    def losses(self, case):
        logp0 = torch.tensor(case["logp"], dtype=torch.float64)
        mask = torch.tensor(case["mask"], dtype=torch.long)
        B, T = mask.shape
        out = {}
        for loss_type in TRL_LOSS_TYPES:
            logp = logp0.clone().requires_grad_(True)
            self.trainer._get_per_token_logps_and_entropies = lambda *a, **k: (logp, torch.zeros(B, T), None)
            self.trainer.loss_type = loss_type
            inputs = {"prompt_ids": torch.zeros(B, 1, dtype=torch.long), "prompt_mask": torch.ones(B, 1, dtype=torch.long),
                      "completion_ids": torch.zeros(B, T, dtype=torch.long), "completion_mask": mask,
                      "advantages": torch.tensor(case["adv"], dtype=torch.float64),
                      "old_per_token_logps": torch.tensor(case["old"], dtype=torch.float64),
                      "num_items_in_batch": mask.sum()}
            loss = self.trainer._compute_loss(self.trainer.model, inputs)
            loss.backward()
            out[loss_type] = {"loss": loss.item(), "grad": logp.grad.tolist()}
        return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        inp = json.load(f)
    import transformers
    import trl
    import verl

    a, losses = inp.get("advantages"), inp.get("losses", [])
    l = losses[0] if losses else None
    trl_run = TRL(a["num_generations"] if a else 2, l["clip_low"] if l else 0.2, l["clip_high"] if l else 0.2,
                  l["length"] if l else 8)
    out = {"versions": {"trl": trl.__version__, "verl": verl.__version__, "transformers": transformers.__version__,
                        "torch": torch.__version__}}
    if a:
        out["advantages"] = verl_advantages(a)
        out["advantages"]["trl_group"] = trl_run.advantages(a["trl_rewards"], "group")
        out["advantages"]["trl_none"] = trl_run.advantages(a["trl_rewards"], "none")
    out["losses"] = []
    for case in losses:
        verl_loss, verl_kl = verl_losses(case)
        out["losses"].append({"verl": verl_loss, "trl": trl_run.losses(case), "verl_kl": verl_kl})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
